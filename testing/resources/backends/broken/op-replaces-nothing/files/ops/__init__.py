from .add import add, add_
from .softmax import softmax, softmax_v2

__all__ = [
    "add",
    "add_",
    "softmax",
    "softmax_v2",
]
