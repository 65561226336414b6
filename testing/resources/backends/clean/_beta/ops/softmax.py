def softmax(x, dim, dtype=None):
    return x.softmax(dim)
