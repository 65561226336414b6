"""The ops this backend provides.

get_specific_ops() returns (aten operator name, function, Autograd.disable) tuples: the aten
name says which operator the function replaces and fixes its calling convention. Names the
generic library has a kernel for are overrides (they must beat it by 1.30x); others are new
ops (they must reach 0.80x of torch). get_unused_ops() lists generic ops to switch off.
"""

from backend_utils import Autograd

from .silu import silu


def get_specific_ops():
    return (("silu", silu, Autograd.disable),)


def get_unused_ops():
    return ()
