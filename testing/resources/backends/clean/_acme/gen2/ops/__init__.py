from .mm import mm

__all__ = ["mm"]
