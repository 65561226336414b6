"""index_select: slices along one dim picked by int64 indices (no generic kernel; exact)."""

from __future__ import annotations

import torch

from flagbot.kernels.ops._aten import spec
from flagbot.kernels.spec import Case, Inputs, numel, randn


def make_inputs(case: Case, dtype: torch.dtype, device: torch.device,
                gen: torch.Generator) -> Inputs:
    """x of the case's shape, `dim` (default 0), `picks` indices (default half the dim)."""
    dim = int(case.params.get("dim", 0))
    picks = int(case.params.get("picks", max(1, case.shape[dim] // 2)))
    index = torch.randint(0, case.shape[dim], (picks,), generator=gen, device=device)
    return (randn(case.shape, dtype, device, gen), dim, index), {}


def moved(case: Case, dtype: torch.dtype) -> int:
    """The picked slices read once and written once, plus the indices."""
    dim = int(case.params.get("dim", 0))
    picks = int(case.params.get("picks", max(1, case.shape[dim] // 2)))
    out = numel(case.shape) // case.shape[dim] * picks
    return 2 * out * dtype.itemsize + 8 * picks


SPEC = spec("index_select", "index_select", make_inputs,
            ci=(Case((40, 33)), Case((8, 33, 5), {"dim": 1, "picks": 7})),
            full=(Case((32000, 4096), {"picks": 8192}), Case((4096, 4096), {"dim": 1}),
                  Case((64, 4096, 128), {"dim": 1, "picks": 1000})),
            bytes_moved=moved, flops=lambda case: 1 + numel(case.shape) // 1000)
