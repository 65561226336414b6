from backend_utils import VendorInfoBase

vendor_info = VendorInfoBase(
    vendor_name="beta",
    device_name="beta",
    device_query_cmd="beta-smi info",
)

CUSTOMIZED_UNUSED_OPS = ()
