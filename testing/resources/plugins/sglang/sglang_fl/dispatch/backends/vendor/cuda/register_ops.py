from sglang_fl.dispatch.types import BackendImplKind, OpImpl


def register_builtins(registry, backend):
    impls = [
        OpImpl(op_name="silu_and_mul", impl_id="vendor.cuda", kind=BackendImplKind.VENDOR,
               fn=backend.silu_and_mul, vendor="cuda"),
        OpImpl(op_name="rms_norm", impl_id="vendor.cuda", kind=BackendImplKind.VENDOR,
               fn=backend.rms_norm, vendor="cuda"),
        OpImpl(op_name="rotary_embedding", impl_id="vendor.cuda", kind=BackendImplKind.VENDOR,
               fn=backend.rotary_embedding, vendor="cuda"),
        OpImpl(op_name="topk", impl_id="vendor.cuda", kind=BackendImplKind.VENDOR,
               fn=backend.topk, vendor="cuda"),
    ]
    registry.register_many(impls)
