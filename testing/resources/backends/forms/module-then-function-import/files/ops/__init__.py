from . import add, softmax
from .add import add, add_
from .softmax import softmax

__all__ = ["add", "add_", "softmax"]
