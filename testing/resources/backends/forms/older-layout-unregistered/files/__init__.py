from backend_utils import VendorDescriptor

vendor_info = VendorDescriptor(
    vendor_name="arm",
    device_name="acme",
    device_query_cmd="acme-smi --list",
    dispatch_key="PrivateUse1",
    triton_extra_name="acme",
    fp64_enabled=False,
)

ARCH_MAP = {
    "2": "gen2",
}

CUSTOMIZED_UNUSED_OPS = ("cos", "add")

__all__ = ["*"]
