from megatron.plugin.decorators import overridable


@overridable
class ScaledSoftmax:
    pass
