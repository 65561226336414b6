"""max.dim: the maximum along one dim and its index (no generic kernel; indices compared
exactly, so every row holds one planted maximum)."""

from __future__ import annotations

import torch

from flagbot.kernels.ops._aten import spec, with_unique_max
from flagbot.kernels.spec import Case, Inputs, numel


def make_inputs(case: Case, dtype: torch.dtype, device: torch.device,
                gen: torch.Generator) -> Inputs:
    """x with a unique maximum per slice, the case's `dim` (default the last)."""
    return (with_unique_max(case, dtype, device, gen), int(case.params.get("dim", -1))), {}


def moved(case: Case, dtype: torch.dtype) -> int:
    """x read once; values and int64 indices written."""
    dim = int(case.params.get("dim", -1))
    outputs = numel(case.shape) // case.shape[dim]
    return numel(case.shape) * dtype.itemsize + outputs * (dtype.itemsize + 8)


SPEC = spec("max", "max.dim", make_inputs,
            ci=(Case((4, 257)), Case((8, 33, 5), {"dim": 1})),
            full=(Case((4096, 4096)), Case((65536, 128)), Case((1024, 65536)),
                  Case((512, 1024, 32), {"dim": 1})),
            bytes_moved=moved, flops=lambda case: numel(case.shape))
