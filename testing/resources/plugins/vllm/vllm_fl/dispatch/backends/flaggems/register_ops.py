from vllm_fl.dispatch.types import BackendImplKind, OpImpl
from vllm_fl.utils import use_flaggems_op


def register_builtins(registry, backend):
    impls = [
        OpImpl(op_name="silu_and_mul", impl_id="default.flagos", kind=BackendImplKind.DEFAULT,
               fn=backend.silu_and_mul, vendor=None),
        OpImpl(op_name="rms_norm", impl_id="default.flagos", kind=BackendImplKind.DEFAULT,
               fn=backend.rms_norm, vendor=None),
        OpImpl(op_name="rotary_embedding", impl_id="default.flagos", kind=BackendImplKind.DEFAULT,
               fn=backend.rotary_embedding, vendor=None),
        OpImpl(op_name="attention_backend", impl_id="default.flagos", kind=BackendImplKind.DEFAULT,
               fn=backend.attention_backend, vendor=None),
        OpImpl(op_name="topk_softmax", impl_id="default.flagos", kind=BackendImplKind.DEFAULT,
               fn=backend.topk_softmax, vendor=None),
    ]
    registry.register_many([i for i in impls if use_flaggems_op(i.op_name)])
