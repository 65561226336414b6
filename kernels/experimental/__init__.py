"""Generated operators taken in by `flagbot kernels import`; the index is _metadata.json.

A backend in the FlagGems form, so `flagbot kernels check --backend kernels/experimental`
checks every imported operator against torch.
"""

from flagbot.kernels.backend_utils import VendorInfoBase

vendor_info = VendorInfoBase(vendor_name="experimental", device_name="any",
                             device_query_cmd="")
