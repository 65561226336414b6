from sglang_fl.dispatch.types import BackendImplKind, OpImpl


def register_builtins(registry, backend):
    impls = [
        OpImpl(op_name="silu_and_mul", impl_id="vendor.tsingmicro", kind=BackendImplKind.VENDOR,
               fn=backend.silu_and_mul, vendor="tsingmicro"),
        OpImpl(op_name="rms_norm", impl_id="vendor.tsingmicro", kind=BackendImplKind.VENDOR,
               fn=backend.rms_norm, vendor="tsingmicro"),
    ]
    registry.register_many(impls)
