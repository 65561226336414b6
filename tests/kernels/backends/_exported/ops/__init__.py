from .rows import softmax, sum_dim

__all__ = ["softmax", "sum_dim"]
