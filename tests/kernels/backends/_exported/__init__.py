"""A backend in the current FlagGems form: ops/__init__.py exports functions by generic name."""

from backend_utils import VendorInfoBase

vendor_info = VendorInfoBase(vendor_name="exported", device_name="cuda", device_query_cmd="true")
CUSTOMIZED_UNUSED_OPS = ("mean_dim",)
