from backend_utils import VendorDescriptor

vendor_info = VendorDescriptor(
    vendor_name="acme",
    device_name="acme",
    device_query_cmd="acme-smi --list",
    dispatch_key="PrivateUse1",
    triton_extra_name="acme",
    fp64_enabled=False,
)

ARCH_MAP = {
    "2": "gen2",
}

arch_version = 300
if arch_version == 300:
    CUSTOMIZED_UNUSED_OPS = ("cumsum", "__and__.Tensor", "lt_Scalar")
elif arch_version == 400:
    CUSTOMIZED_UNUSED_OPS = ("cumsum",)

__all__ = ["*"]
