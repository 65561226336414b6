from .add import add, add_, add_relu
from .softmax import softmax

__all__ = [
    "add",
    "add_",
    "add_relu",
    "softmax",
]
