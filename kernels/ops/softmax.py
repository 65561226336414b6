"""softmax.int along the last dim: one program per row, the row held in registers when it fits."""
# Triton kernels take DSL-typed arguments that Python annotations cannot express.
# mypy: disable-error-code="untyped-decorator,no-untyped-def"

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl

from flagbot.kernels.ops._rows import MAX_ROW_BLOCK, row_block, row_warps
from flagbot.kernels.spec import (
    Case,
    OpSpec,
    elementwise_bytes,
    last_dim,
    numel,
    rows,
    unary_inputs,
)


@triton.jit
def _softmax_row_kernel(x_ptr, out_ptr, n, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    e = tl.where(mask, e, 0.0)
    tl.store(out_ptr + row * n + cols, (e / tl.sum(e, axis=0)).to(out_ptr.dtype.element_ty),
             mask=mask)


@triton.jit
def _softmax_looped_kernel(x_ptr, out_ptr, n, BLOCK_N: tl.constexpr):
    # Rows too long for registers: an online max/sum pass, then a normalising pass (reads twice).
    row = tl.program_id(0).to(tl.int64)
    base = row * n
    m = tl.full([BLOCK_N], -float("inf"), tl.float32)
    s = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, n, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + base + cols, mask=cols < n, other=-float("inf")).to(tl.float32)
        new_m = tl.maximum(m, x)
        alpha = tl.where(new_m == -float("inf"), 0.0, tl.exp(m - new_m))
        s = s * alpha + tl.where(x == -float("inf"), 0.0, tl.exp(x - new_m))
        m = new_m
    row_max = tl.max(m, axis=0)
    row_sum = tl.sum(s * tl.where(m == -float("inf"), 0.0, tl.exp(m - row_max)), axis=0)
    for start in range(0, n, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < n
        x = tl.load(x_ptr + base + cols, mask=mask, other=-float("inf")).to(tl.float32)
        y = tl.exp(x - row_max) / row_sum
        tl.store(out_ptr + base + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def softmax(x: torch.Tensor, dim: int = -1, dtype: torch.dtype | None = None, *,
            max_row_block: int = MAX_ROW_BLOCK) -> torch.Tensor:
    """Softmax along the last dimension (aten::softmax.int with dim = -1 or ndim - 1)."""
    if dim not in (-1, x.dim() - 1):
        raise NotImplementedError(f"softmax: only the last dim is supported, got dim={dim}")
    x = x.contiguous() if dtype is None else x.contiguous().to(dtype)
    out = torch.empty_like(x)
    m, n = rows(tuple(x.shape))
    block = row_block(n)
    kernel: Any
    if block <= max_row_block:
        kernel = _softmax_row_kernel
        kernel[(m,)](x, out, n, BLOCK_N=block, num_warps=row_warps(block))
    else:
        kernel = _softmax_looped_kernel
        kernel[(m,)](x, out, n, BLOCK_N=max_row_block, num_warps=row_warps(max_row_block))
    return out


SPEC = OpSpec(
    name="softmax",
    aten=("softmax.int",),
    generic=softmax,
    reference=torch.softmax,
    make_inputs=lambda case, dtype, dev, gen: (unary_inputs(case, dtype, dev, gen)[0], {"dim": -1}),
    ci_cases=(Case((4, 33)), Case((3, 200))),
    full_cases=(Case((4096, 4096)), Case((65536, 128)), Case((1024, 65536))),
    bytes_moved=elementwise_bytes(2),
    flops=lambda case: 5 * numel(case.shape),
    reduce_size=last_dim,
)
