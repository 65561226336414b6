"""Template vendor backend: copy this folder to backends/_<vendor> and edit each file.

This file describes the device. `backend_utils` is provided by whoever loads the folder
(FlagGems' runtime, or `flagbot kernels check`), so do not add it to your package.
"""

from backend_utils import VendorInfoBase

vendor_info = VendorInfoBase(
    vendor_name="template",  # must equal the folder name without its leading underscore
    device_name="cuda",  # the torch device type your kernels run on (torch.<device_name>)
    device_query_cmd="nvidia-smi",  # a command that succeeds only on your hardware
)
