# register() calls as in megatron/plugin/override_registry.py (a subset)
from megatron.plugin.decorators import register

register(
    target="megatron.core.optimizer.clip_grads.get_grad_norm_fp32",
    impl="megatron.plugin.optimizer.clip_grads.get_grad_norm_fp32",
)
register(
    target="megatron.core.transformer.multi_token_prediction.reduce_loss_in_tracker",
    impl="megatron.plugin.kunlunxin.transformer.multi_token_prediction.reduce_loss_in_tracker",
    vendor="kunlunxin",
)
register(
    target="megatron.core.dist_checkpointing.strategies.filesystem_async.preload_tensors",
    impl="megatron.plugin.kunlunxin.dist_checkpointing.strategies.filesystem_async.preload_tensors_kunlunxin",
    vendor="kunlunxin",
)
register(
    target="megatron.core.dist_checkpointing.strategies.filesystem_async.FileSystemWriterAsync.prepare_write_data",
    impl="megatron.plugin.kunlunxin.dist_checkpointing.strategies.filesystem_async.prepare_write_data",
    vendor="kunlunxin",
)
register(
    target="megatron.core.tensor_parallel.random._set_cuda_rng_state",
    impl="megatron.plugin.Ascend.tensor_parallel.random._set_cuda_rng_state",
    vendor="npu",
)
register(
    target="megatron.core.fusions.fused_softmax.ScaledSoftmax",
    impl="megatron.plugin.Ascend.fusions.fused_softmax.ScaledSoftmax",
    vendor="npu",
)
