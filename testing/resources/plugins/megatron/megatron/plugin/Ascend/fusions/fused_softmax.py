class ScaledSoftmax:
    pass
