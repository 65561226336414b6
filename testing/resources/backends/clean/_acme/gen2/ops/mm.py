def mm(a, b):
    return a @ b
