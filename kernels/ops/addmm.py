"""addmm: beta * bias + alpha * (mat1 @ mat2), bias a row broadcast over M (no generic kernel)."""

from __future__ import annotations

import torch

from flagbot.kernels.ops._aten import matmul_bytes, matmul_flops, spec
from flagbot.kernels.spec import Case, Inputs, randn


def make_inputs(case: Case, dtype: torch.dtype, device: torch.device,
                gen: torch.Generator) -> Inputs:
    """Case shape (M, N, K): bias (N,), mat1 (M, K), mat2 (K, N); beta and alpha from params."""
    m, n, k = case.shape
    bias, a, b = (randn(s, dtype, device, gen) for s in ((n,), (m, k), (k, n)))
    return (bias, a, b), {key: case.params[key] for key in ("beta", "alpha") if key in case.params}


SPEC = spec("addmm", "addmm", make_inputs,
            ci=(Case((33, 40, 24)), Case((16, 130, 70), {"beta": 0.5, "alpha": 2.0})),
            full=(Case((4096, 4096, 4096)), Case((64, 8192, 8192)), Case((4097, 3001, 1999))),
            bytes_moved=matmul_bytes(bias=True), flops=matmul_flops,
            reduce_size=lambda case: case.shape[-1])
