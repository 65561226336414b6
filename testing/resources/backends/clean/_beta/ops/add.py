def add(x, y, alpha=1):
    return x + alpha * y
