from vllm_fl.dispatch.types import BackendImplKind, OpImpl


def register_builtins(registry, backend):
    impls = [
        OpImpl(op_name="silu_and_mul", impl_id="vendor.kunlunxin", kind=BackendImplKind.VENDOR,
               fn=backend.silu_and_mul, vendor="kunlunxin"),
        OpImpl(op_name="rms_norm", impl_id="vendor.kunlunxin", kind=BackendImplKind.VENDOR,
               fn=backend.rms_norm, vendor="kunlunxin"),
        OpImpl(op_name="rotary_embedding", impl_id="vendor.kunlunxin", kind=BackendImplKind.VENDOR,
               fn=backend.rotary_embedding, vendor="kunlunxin"),
        OpImpl(op_name="attention_backend", impl_id="vendor.kunlunxin", kind=BackendImplKind.VENDOR,
               fn=backend.attention_backend, vendor="kunlunxin"),
        OpImpl(op_name="fused_gdn_gating", impl_id="vendor.kunlunxin", kind=BackendImplKind.VENDOR,
               fn=backend.fused_gdn_gating, vendor="kunlunxin"),
    ]
    registry.register_many(impls)
