"""rms_norm over the trailing dims (weight optional): stats in fp32, rows of any length
(looped beyond one register block), any row stride."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from flagbot.kernels.ops._rows import MAX_ROW_BLOCK, norm_last_dims
from flagbot.kernels.spec import Case, Inputs, OpSpec, last_dim, numel, randn


def rms_norm(x: torch.Tensor, normalized_shape: Sequence[int],
             weight: torch.Tensor | None = None, eps: float | None = None, *,
             max_row_block: int = MAX_ROW_BLOCK) -> torch.Tensor:
    """aten::rms_norm (eps None = the dtype's eps, as torch)."""
    eps = torch.finfo(x.dtype).eps if eps is None else eps
    return norm_last_dims("rms_norm", x, normalized_shape, weight, None, eps, rms=True,
                          max_row_block=max_row_block)


def make_inputs(case: Case, dtype: torch.dtype, device: torch.device,
                gen: torch.Generator) -> Inputs:
    """x of the case's shape, (n,), a weight of n; eps fixed at 1e-6."""
    n = case.shape[-1]
    x = randn(case.shape, dtype, device, gen)
    w = randn((n,), dtype, device, gen)
    return (x, (n,), w), {"eps": 1e-6}


def _bytes(case: Case, dtype: torch.dtype) -> int:
    return (2 * numel(case.shape) + case.shape[-1]) * dtype.itemsize


SPEC = OpSpec(
    name="rms_norm",
    aten=("rms_norm",),
    generic=rms_norm,
    reference=torch.nn.functional.rms_norm,
    make_inputs=make_inputs,
    ci_cases=(Case((4, 48)), Case((2, 200))),
    full_cases=(Case((4096, 4096)), Case((65536, 256)), Case((16384, 8192)),
                Case((16384, 12288)), Case((8192, 5000)), Case((64, 100_003))),
    bytes_moved=_bytes,
    flops=lambda case: 4 * numel(case.shape),
    reduce_size=last_dim,
)
