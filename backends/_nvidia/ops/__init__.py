"""The ops this backend provides, in FlagGems' get_specific_ops form.

Each tuple is (aten operator name, function, Autograd.disable): forward only. The harness pairs
the aten name with the generic library's spec: all four (softmax, log_softmax, rms_norm, mm)
override generic ops, so each must be >= 1.30x the op it replaces.
"""

from backend_utils import Autograd

from .log_softmax import log_softmax
from .mm import mm
from .rms_norm import rms_norm
from .softmax import softmax


def get_specific_ops():
    return (
        ("softmax.int", softmax, Autograd.disable),
        ("rms_norm", rms_norm, Autograd.disable),
        ("mm", mm, Autograd.disable),
        ("log_softmax.int", log_softmax, Autograd.disable),
    )


def get_unused_ops():
    return ()
