from .add import add, add_
from .softmax import softmax
from .softmax import softmax as safe_softmax

__all__ = ["add", "add_", "softmax", "safe_softmax"]
