"""silu: x * sigmoid(x), computed in fp32 whatever the storage dtype, any shape and strides."""

from __future__ import annotations

import torch

from flagbot.kernels.ops._pointwise import check_operands, pointwise
from flagbot.kernels.spec import Case, OpSpec, elementwise_bytes, numel, unary_inputs


def silu(x: torch.Tensor) -> torch.Tensor:
    """SiLU (swish) of `x`."""
    check_operands("silu", x)
    return pointwise("silu", [x])


SPEC = OpSpec(
    name="silu",
    aten=("silu",),
    generic=silu,
    reference=torch.nn.functional.silu,
    make_inputs=unary_inputs,
    ci_cases=(Case((1000,)), Case((4, 257))),
    full_cases=(Case((1 << 20,)), Case((1 << 28,)), Case((100_000_007,))),
    bytes_moved=elementwise_bytes(2),
    flops=lambda case: 4 * numel(case.shape),
)
