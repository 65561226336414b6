"""bmm: a batch of products, (B, M, K) @ (B, K, N) (no generic kernel)."""

from __future__ import annotations

import torch

from flagbot.kernels.ops._aten import matmul_bytes, matmul_flops, spec
from flagbot.kernels.spec import Case, Inputs, randn


def make_inputs(case: Case, dtype: torch.dtype, device: torch.device,
                gen: torch.Generator) -> Inputs:
    """Case shape (B, M, N, K)."""
    b, m, n, k = case.shape
    return (randn((b, m, k), dtype, device, gen), randn((b, k, n), dtype, device, gen)), {}


SPEC = spec("bmm", "bmm", make_inputs,
            ci=(Case((2, 17, 20, 12)), Case((3, 33, 8, 40))),
            full=(Case((16, 1024, 1024, 1024)), Case((64, 512, 64, 512)),
                  Case((8, 1000, 1000, 999))),
            bytes_moved=matmul_bytes(bias=False), flops=matmul_flops,
            reduce_size=lambda case: case.shape[-1])
