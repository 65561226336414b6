from .add import add


def get_specific_ops():
    return {}


def get_unused_ops():
    return ()


__all__ = ["get_specific_ops", "get_unused_ops", "add"]
