"""layer_norm over the trailing dims (weight and bias optional): stats in fp32, rows of any
length (looped beyond one register block), any row stride."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from flagbot.kernels.ops._rows import MAX_ROW_BLOCK, norm_last_dims
from flagbot.kernels.spec import Case, Inputs, OpSpec, last_dim, numel, randn


def layer_norm(x: torch.Tensor, normalized_shape: Sequence[int],
               weight: torch.Tensor | None = None, bias: torch.Tensor | None = None,
               eps: float = 1e-5, *, max_row_block: int = MAX_ROW_BLOCK) -> torch.Tensor:
    """aten::layer_norm: normalise over the trailing `normalized_shape` dims."""
    return norm_last_dims("layer_norm", x, normalized_shape, weight, bias, eps, rms=False,
                          max_row_block=max_row_block)


def _inputs(case: Case, dtype: torch.dtype, device: torch.device, gen: torch.Generator) -> Inputs:
    n = case.shape[-1]
    x = randn(case.shape, dtype, device, gen)
    w = randn((n,), dtype, device, gen)
    b = randn((n,), dtype, device, gen)
    return (x, (n,), w, b), {"eps": 1e-5}


def _bytes(case: Case, dtype: torch.dtype) -> int:
    return (2 * numel(case.shape) + 2 * case.shape[-1]) * dtype.itemsize


SPEC = OpSpec(
    name="layer_norm",
    aten=("layer_norm",),
    generic=layer_norm,
    reference=torch.nn.functional.layer_norm,
    make_inputs=_inputs,
    ci_cases=(Case((4, 48)), Case((2, 200))),
    full_cases=(Case((4096, 4096)), Case((65536, 256)), Case((16384, 8192)),
                Case((16384, 12288)), Case((8192, 5000)), Case((64, 100_003))),
    bytes_moved=_bytes,
    flops=lambda case: 8 * numel(case.shape),
    reduce_size=last_dim,
)
