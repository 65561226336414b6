"""div.Tensor: true division x / y, y kept away from zero (no generic kernel)."""

from __future__ import annotations

import torch

from flagbot.kernels.ops._aten import positive, spec
from flagbot.kernels.spec import (
    Case,
    Inputs,
    binary_bytes,
    numel,
    randn,
    second_operand_shape,
)


def make_inputs(case: Case, dtype: torch.dtype, device: torch.device,
                gen: torch.Generator) -> Inputs:
    """x normal; y of `second_operand_shape` with |y| >= 0.5 and a random sign."""
    x = randn(case.shape, dtype, device, gen)
    shape = second_operand_shape(case)
    sign = torch.randint(0, 2, shape, generator=gen, device=device) * 2 - 1
    y = (positive(shape, torch.float32, device, gen, floor=0.5) * sign).to(dtype)
    return (x, y), {}


SPEC = spec("div", "div.Tensor", make_inputs,
            ci=(Case((1000,)), Case((4, 257), {"broadcast": 1})),
            full=(Case((1 << 24,)), Case((4096, 4097)), Case((8192, 12289), {"broadcast": 1})),
            bytes_moved=binary_bytes, flops=lambda case: numel(case.shape))
