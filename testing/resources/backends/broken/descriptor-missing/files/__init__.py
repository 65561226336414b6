vendor_info = None
CUSTOMIZED_UNUSED_OPS = ()
ARCH_MAP = {"2": "gen2"}
