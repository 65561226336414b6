def add(x, y, alpha=1):
    return x + alpha * y


def add_(x, y, alpha=1):
    return x.add_(y, alpha=alpha)
