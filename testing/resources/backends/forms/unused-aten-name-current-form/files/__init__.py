from backend_utils import VendorDescriptor

vendor_info = VendorDescriptor(
    vendor_name="acme",
    device_name="acme",
    device_query_cmd="acme-smi --list",
)

ARCH_MAP = {"2": "gen2"}

CUSTOMIZED_UNUSED_OPS = ("cumsum", "_safe_softmax")
