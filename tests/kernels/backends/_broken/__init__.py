from backend_utils import VendorInfoBase

vendor_info = VendorInfoBase(vendor_name="broken", device_name="cuda", device_query_cmd="true")
