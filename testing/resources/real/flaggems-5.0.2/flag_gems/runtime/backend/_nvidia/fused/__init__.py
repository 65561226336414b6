from .fused_add_rms_norm import fused_add_rms_norm

__all__ = [
    "fused_add_rms_norm",
]
