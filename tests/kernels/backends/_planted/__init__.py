"""A backend with planted faults: a wrong kernel, a raising kernel, an unknown op."""

from backend_utils import VendorInfoBase

vendor_info = VendorInfoBase(vendor_name="planted", device_name="cuda", device_query_cmd="true")
