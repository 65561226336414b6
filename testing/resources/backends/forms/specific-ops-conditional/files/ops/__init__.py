from backend_utils import Autograd

from . import add, softmax


def _new_generation():
    return True


def get_specific_ops():
    if _new_generation():
        return (
            ("add.Tensor", add.add, Autograd.disable),
            ("softmax.int", softmax.softmax, Autograd.enable),
        )
    else:
        return ()


def get_unused_ops():
    return ("cumsum",)
