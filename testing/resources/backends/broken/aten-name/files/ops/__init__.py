from backend_utils import Autograd

from . import add, softmax


def get_specific_ops():
    return (
        ("add.Tensr", add.add, Autograd.disable),
        ("softmax.int", softmax.softmax, Autograd.enable),
    )


def get_unused_ops():
    return ("cumsum", "cos")
