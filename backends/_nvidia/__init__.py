"""NVIDIA backend: Hopper-tuned overrides of generic ops, plus log_softmax (not in the library).

Loaded by path by `flagbot kernels check --backend backends/_nvidia`; the harness provides
`backend_utils`, as FlagGems does for the vendor folders it imports.
"""

from backend_utils import VendorInfoBase

vendor_info = VendorInfoBase(
    vendor_name="nvidia",
    device_name="cuda",
    device_query_cmd="nvidia-smi",
)
