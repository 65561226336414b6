"""layer_norm over the last dim with weight and bias: one program per row, stats in fp32."""
# Triton kernels take DSL-typed arguments that Python annotations cannot express.
# mypy: disable-error-code="untyped-decorator,no-untyped-def"

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import triton
import triton.language as tl

from flagbot.kernels.ops._rows import MAX_ROW_BLOCK, row_block, row_warps
from flagbot.kernels.spec import Case, Inputs, OpSpec, last_dim, numel, randn, rows


@triton.jit
def _layer_norm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, n, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n
    d = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / n + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + row * n + cols, (d * rstd * w + b).to(out_ptr.dtype.element_ty), mask=mask)


def layer_norm(x: torch.Tensor, normalized_shape: Sequence[int], weight: torch.Tensor,
               bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """aten::layer_norm over the last dim (weight and bias required)."""
    if len(normalized_shape) != 1 or normalized_shape[0] != x.shape[-1]:
        raise NotImplementedError("layer_norm: only normalisation over the last dim is supported")
    x = x.contiguous()
    out = torch.empty_like(x)
    m, n = rows(tuple(x.shape))
    block = row_block(n)
    if block > MAX_ROW_BLOCK:
        raise NotImplementedError(f"layer_norm: rows longer than {MAX_ROW_BLOCK} elements")
    kernel: Any = _layer_norm_kernel
    kernel[(m,)](x, weight.contiguous(), bias.contiguous(), out, n, eps, BLOCK_N=block,
                 num_warps=row_warps(block))
    return out


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
    full_cases=(Case((4096, 4096)), Case((65536, 256)), Case((16384, 8192))),
    bytes_moved=_bytes,
    flops=lambda case: 8 * numel(case.shape),
    reduce_size=last_dim,
)
