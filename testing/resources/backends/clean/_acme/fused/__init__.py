from .gelu_and_mul import gelu_and_mul

__all__ = ["gelu_and_mul"]
