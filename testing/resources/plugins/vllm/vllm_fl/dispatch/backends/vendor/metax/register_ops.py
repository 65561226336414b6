from vllm_fl.dispatch.types import BackendImplKind, OpImpl


def register_builtins(registry, backend):
    impls = [
        OpImpl(op_name="silu_and_mul", impl_id="vendor.metax", kind=BackendImplKind.VENDOR,
               fn=backend.silu_and_mul, vendor="metax"),
        OpImpl(op_name="rms_norm", impl_id="vendor.metax", kind=BackendImplKind.VENDOR,
               fn=backend.rms_norm, vendor="metax"),
        OpImpl(op_name="rotary_embedding", impl_id="vendor.metax", kind=BackendImplKind.VENDOR,
               fn=backend.rotary_embedding, vendor="metax"),
        OpImpl(op_name="attention_backend", impl_id="vendor.metax", kind=BackendImplKind.VENDOR,
               fn=backend.attention_backend, vendor="metax"),
        OpImpl(op_name="topk_softmax", impl_id="vendor.metax", kind=BackendImplKind.VENDOR,
               fn=backend.topk_softmax, vendor="metax"),
    ]
    registry.register_many(impls)
