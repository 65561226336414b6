"""mul.Tensor: out = x * y, broadcast like torch, one pass over memory."""

from __future__ import annotations

import torch

from flagbot.kernels.ops._pointwise import check_operands, pointwise
from flagbot.kernels.spec import Case, OpSpec, binary_bytes, binary_inputs, numel


def mul(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """x * y for float tensors of one dtype (any shapes that broadcast, any strides)."""
    check_operands("mul", x, y)
    return pointwise("mul", [x, y])


SPEC = OpSpec(
    name="mul",
    aten=("mul.Tensor",),
    generic=mul,
    reference=torch.mul,
    make_inputs=binary_inputs,
    ci_cases=(Case((1000,)), Case((4, 257))),
    full_cases=(Case((1 << 20,)), Case((1 << 28,)), Case((100_000_007,)),
                Case((8192, 12289), {"broadcast": 1})),
    bytes_moved=binary_bytes,
    flops=lambda case: numel(case.shape),
)
