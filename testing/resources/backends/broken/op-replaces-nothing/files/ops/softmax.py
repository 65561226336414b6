from flag_gems import runtime


def softmax(x, dim, half_to_float=False):
    return runtime.launch("softmax", x, dim)


def softmax_v2(x, dim):
    return softmax(x, dim)
