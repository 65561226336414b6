from backend_utils import VendorDescriptor


def _extra_name():
    import triton

    return "acme3" if triton.__version__ >= "3" else "acme"


vendor_info = VendorDescriptor(
    vendor_name="acme",
    device_name="acme",
    device_query_cmd="acme-smi --list",
    triton_extra_name=_extra_name(),
)

ARCH_MAP = {"2": "gen2"}

CUSTOMIZED_UNUSED_OPS = ("cumsum",)
