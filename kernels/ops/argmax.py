"""argmax over one dim (no generic kernel; one planted maximum per slice, indices exact)."""

from __future__ import annotations

import torch

from flagbot.kernels.ops._aten import spec, with_unique_max
from flagbot.kernels.ops.max import moved
from flagbot.kernels.spec import Case, Inputs, numel


def make_inputs(case: Case, dtype: torch.dtype, device: torch.device,
                gen: torch.Generator) -> Inputs:
    """x with a unique maximum per slice, the case's `dim` (default the last)."""
    return (with_unique_max(case, dtype, device, gen), int(case.params.get("dim", -1))), {}


SPEC = spec("argmax", "argmax", make_inputs,
            ci=(Case((4, 257)), Case((8, 33, 5), {"dim": 1})),
            full=(Case((4096, 4096)), Case((65536, 128)), Case((1024, 65536)),
                  Case((512, 1024, 32), {"dim": 1})),
            bytes_moved=moved, flops=lambda case: numel(case.shape))
