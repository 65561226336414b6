from vllm_fl.dispatch.types import BackendImplKind, OpImpl


def register_builtins(registry, backend):
    impls = [
        OpImpl(op_name="silu_and_mul", impl_id="reference.torch", kind=BackendImplKind.REFERENCE,
               fn=backend.silu_and_mul, vendor=None),
        OpImpl(op_name="rms_norm", impl_id="reference.torch", kind=BackendImplKind.REFERENCE,
               fn=backend.rms_norm, vendor=None),
        OpImpl(op_name="rotary_embedding", impl_id="reference.torch", kind=BackendImplKind.REFERENCE,
               fn=backend.rotary_embedding, vendor=None),
        OpImpl(op_name="attention_backend", impl_id="reference.torch", kind=BackendImplKind.REFERENCE,
               fn=backend.attention_backend, vendor=None),
        OpImpl(op_name="topk_softmax", impl_id="reference.torch", kind=BackendImplKind.REFERENCE,
               fn=backend.topk_softmax, vendor=None),
    ]
    registry.register_many(impls)
