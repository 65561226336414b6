"""rms_norm over the last dim with weight: one program per row, stats in fp32."""
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
def _rms_norm_kernel(x_ptr, w_ptr, out_ptr, n, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + row * n + cols, (x * rstd * w).to(out_ptr.dtype.element_ty), mask=mask)


def rms_norm(x: torch.Tensor, normalized_shape: Sequence[int], weight: torch.Tensor,
             eps: float | None = None) -> torch.Tensor:
    """aten::rms_norm over the last dim (weight required; eps None = dtype's eps, as torch)."""
    if len(normalized_shape) != 1 or normalized_shape[0] != x.shape[-1]:
        raise NotImplementedError("rms_norm: only normalisation over the last dim is supported")
    eps = torch.finfo(x.dtype).eps if eps is None else eps
    x = x.contiguous()
    out = torch.empty_like(x)
    m, n = rows(tuple(x.shape))
    block = row_block(n)
    if block > MAX_ROW_BLOCK:
        raise NotImplementedError(f"rms_norm: rows longer than {MAX_ROW_BLOCK} elements")
    kernel: Any = _rms_norm_kernel
    kernel[(m,)](x, weight.contiguous(), out, n, eps, BLOCK_N=block, num_warps=row_warps(block))
    return out


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
    full_cases=(Case((4096, 4096)), Case((65536, 256)), Case((16384, 8192))),
    bytes_moved=_bytes,
    flops=lambda case: 4 * numel(case.shape),
    reduce_size=last_dim,
)
