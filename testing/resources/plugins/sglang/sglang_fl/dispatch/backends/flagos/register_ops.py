from sglang_fl.dispatch.types import BackendImplKind, OpImpl


def register_builtins(registry, backend):
    impls = [
        OpImpl(op_name="silu_and_mul", impl_id="default.flagos", kind=BackendImplKind.DEFAULT,
               fn=backend.silu_and_mul, vendor=None),
        OpImpl(op_name="rms_norm", impl_id="default.flagos", kind=BackendImplKind.DEFAULT,
               fn=backend.rms_norm, vendor=None),
        OpImpl(op_name="rotary_embedding", impl_id="default.flagos", kind=BackendImplKind.DEFAULT,
               fn=backend.rotary_embedding, vendor=None),
        OpImpl(op_name="topk", impl_id="default.flagos", kind=BackendImplKind.DEFAULT,
               fn=backend.topk, vendor=None),
    ]
    registry.register_many(impls)
