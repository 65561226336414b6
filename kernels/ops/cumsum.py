"""cumsum along one dim (no generic kernel); atol scales with the scanned length."""

from __future__ import annotations

import torch

from flagbot.kernels.ops._aten import spec
from flagbot.kernels.spec import Case, Inputs, elementwise_bytes, numel, randn


def make_inputs(case: Case, dtype: torch.dtype, device: torch.device,
                gen: torch.Generator) -> Inputs:
    """x normal, the case's `dim` (default the last)."""
    return (randn(case.shape, dtype, device, gen), int(case.params.get("dim", -1))), {}


SPEC = spec("cumsum", "cumsum", make_inputs,
            ci=(Case((4, 257)), Case((8, 33, 5), {"dim": 1})),
            full=(Case((4096, 4096)), Case((1 << 20,)), Case((65536, 128)),
                  Case((512, 1024, 32), {"dim": 1})),
            bytes_moved=elementwise_bytes(2), flops=lambda case: numel(case.shape),
            reduce_size=lambda case: case.shape[int(case.params.get("dim", -1))])
