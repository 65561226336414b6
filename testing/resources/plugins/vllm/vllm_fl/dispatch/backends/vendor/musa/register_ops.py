from vllm_fl.dispatch.types import BackendImplKind, OpImpl


def register_builtins(registry, backend):
    impls = [
        OpImpl(op_name="silu_and_mul", impl_id="vendor.musa", kind=BackendImplKind.VENDOR,
               fn=backend.silu_and_mul, vendor="musa"),
        OpImpl(op_name="rms_norm", impl_id="vendor.musa", kind=BackendImplKind.VENDOR,
               fn=backend.rms_norm, vendor="musa"),
        OpImpl(op_name="rotary_embedding", impl_id="vendor.musa", kind=BackendImplKind.VENDOR,
               fn=backend.rotary_embedding, vendor="musa"),
        OpImpl(op_name="attention_backend", impl_id="vendor.musa", kind=BackendImplKind.VENDOR,
               fn=backend.attention_backend, vendor="musa"),
    ]
    registry.register_many(impls)
