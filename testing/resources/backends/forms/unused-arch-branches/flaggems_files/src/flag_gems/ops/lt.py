def lt_scalar(A, B):
    return A < B
