from megatron.plugin.decorators import overridable


class MTPLossLoggingHelper:
    @overridable
    def reduce_loss_in_tracker():
        pass
