import os

arch_version = int(os.environ.get("ARCH", "300"))

__all__ = []

if arch_version == 300:
    from .gelu_and_mul import gelu_and_mul

    __all__ = ["gelu_and_mul"]
elif arch_version == 400 or arch_version == 410:
    from .gelu_and_mul import gelu_and_mul

    __all__ = ["gelu_and_mul", "moe_sum"]
