"""cat: several tensors joined along one dim (no generic kernel; a copy, exact)."""

from __future__ import annotations

import torch

from flagbot.kernels.ops._aten import spec
from flagbot.kernels.spec import Case, Inputs, numel, randn


def make_inputs(case: Case, dtype: torch.dtype, device: torch.device,
                gen: torch.Generator) -> Inputs:
    """`parts` tensors (default 3) of the case's shape, the i-th i+1 times as long along
    `dim` (default 0), so the pieces differ in size."""
    dim = int(case.params.get("dim", 0))
    shapes = []
    for i in range(int(case.params.get("parts", 3))):
        shape = list(case.shape)
        shape[dim] *= i + 1
        shapes.append(tuple(shape))
    return ([randn(s, dtype, device, gen) for s in shapes], dim), {}


def moved(case: Case, dtype: torch.dtype) -> int:
    """Every part read once and written once."""
    parts = int(case.params.get("parts", 3))
    return 2 * numel(case.shape) * (parts * (parts + 1) // 2) * dtype.itemsize


SPEC = spec("cat", "cat", make_inputs,
            ci=(Case((5, 33)), Case((4, 7, 9), {"dim": 1, "parts": 2})),
            full=(Case((1024, 4096)), Case((4096, 1000), {"dim": 1}),
                  Case((64, 128, 512), {"dim": 1, "parts": 4})),
            bytes_moved=moved, flops=lambda case: numel(case.shape))
