# vendor_name -> device fields, as vllm_fl/utils.py declares them (a subset)
VENDOR_DEVICE_MAP: dict[str, dict[str, str]] = {
    "nvidia": {"device_type": "cuda", "device_name": "nvidia"},
    "metax": {"device_type": "cuda", "device_name": "metax"},
    "mthreads": {"device_type": "musa", "device_name": "musa"},
    "kunlunxin": {"device_type": "cuda", "device_name": "kunlunxin"},
}


def use_flaggems_op(op_name):
    return True
