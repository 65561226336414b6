from .missing_module import softmax  # noqa: F401  (planted: the module does not exist)
