import os


def get_platform_name():
    # the probes of sglang_fl/dispatch/config/utils.py, in their order
    import torch

    if hasattr(torch, "txda") and torch.txda.is_available():
        return "tsingmicro"
    if torch.cuda.is_available():
        return "nvidia"
    override = os.environ.get("SGLANG_FL_PLATFORM", "").strip().lower()
    if override:
        return override
    return "unknown"
