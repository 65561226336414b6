"""fill.Scalar: a new tensor like x, every element the scalar value (no generic kernel)."""

from __future__ import annotations

import torch

from flagbot.kernels.ops._aten import spec
from flagbot.kernels.spec import Case, Inputs, elementwise_bytes, numel, randn


def make_inputs(case: Case, dtype: torch.dtype, device: torch.device,
                gen: torch.Generator) -> Inputs:
    """x of the case's shape (its values must not show through) and the case's `value`."""
    return (randn(case.shape, dtype, device, gen), float(case.params.get("value", 1.5))), {}


SPEC = spec("fill", "fill.Scalar", make_inputs,
            ci=(Case((1000,)), Case((4, 257), {"value": -3.25})),
            full=(Case((1 << 24,)), Case((4096, 4097)), Case((100_000_007,), {"value": -3.25})),
            bytes_moved=elementwise_bytes(1), flops=lambda case: numel(case.shape))
