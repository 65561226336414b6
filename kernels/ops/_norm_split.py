"""layer_norm and rms_norm over few very long rows: each row split into chunks that programs
share, as the split softmax does.

One program a row (the looped kernel in _rows.py) leaves most of the GPU idle when there are
fewer rows than multiprocessors: on an H200 (2026-11-27, seed 718272864) 1x3095203 bf16
layer_norm took 1,240 us, 1% of copy bandwidth, and 8x1048577 fp16 471 us. Here a first launch
writes each chunk's sums of (x - shift) and (x - shift)^2 in fp32, shift being the row's first
element (layer_norm: moments about it do not cancel when the mean dwarfs the spread; rms_norm:
no shift), and a second launch adds a row's chunk sums and writes that chunk's output.
"""
# Triton kernels take DSL-typed arguments that Python annotations cannot express.
# mypy: disable-error-code="untyped-decorator,no-untyped-def"

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl

from flagbot.kernels.ops._host import cdiv, next_power_of_2
from flagbot.kernels.ops._rows_split import SPLIT_WARPS


@triton.jit
def _norm_chunk_stats_kernel(x_ptr, part_ptr, n, stride_row, chunk, chunks,
                             RMS: tl.constexpr, BLOCK_N: tl.constexpr, ALIGN: tl.constexpr):
    n = (n // ALIGN) * ALIGN  # exact: tells the compiler it divides
    stride_row = (stride_row // ALIGN) * ALIGN  # exact: tells the compiler it divides
    row = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1)
    src = x_ptr + row * stride_row
    if RMS:
        shift = 0.0
    else:
        shift = tl.load(src).to(tl.float32)
    lo = c * chunk
    hi = tl.minimum(lo + chunk, n)
    # Per-lane running sums: one cross-lane reduction at the end, not one per tile.
    s1 = tl.zeros([BLOCK_N], tl.float32)
    s2 = tl.zeros([BLOCK_N], tl.float32)
    for start in range(lo, hi, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < hi
        d = tl.where(mask, tl.load(src + cols, mask=mask, other=0.0).to(tl.float32) - shift,
                     0.0)
        s1 += d
        s2 += d * d
    dst = part_ptr + (row * chunks + c) * 2
    tl.store(dst, tl.sum(s1, axis=0))
    tl.store(dst + 1, tl.sum(s2, axis=0))


@triton.jit
def _norm_chunk_out_kernel(x_ptr, w_ptr, b_ptr, part_ptr, out_ptr, n, stride_row, chunk,
                           chunks, eps, RMS: tl.constexpr, HAS_W: tl.constexpr,
                           HAS_B: tl.constexpr, BLOCK_N: tl.constexpr, CHUNKS: tl.constexpr,
                           ALIGN: tl.constexpr):
    n = (n // ALIGN) * ALIGN  # exact: tells the compiler it divides
    stride_row = (stride_row // ALIGN) * ALIGN  # exact: tells the compiler it divides
    row = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1)
    src = x_ptr + row * stride_row
    k = tl.arange(0, CHUNKS)
    parts = part_ptr + (row * chunks + k) * 2
    mean_d = tl.sum(tl.load(parts, mask=k < chunks, other=0.0), axis=0) / n
    sq = tl.sum(tl.load(parts + 1, mask=k < chunks, other=0.0), axis=0) / n
    if RMS:
        var = sq
        mean = 0.0
    else:
        var = tl.maximum(sq - mean_d * mean_d, 0.0)
        mean = tl.load(src).to(tl.float32) + mean_d
    rstd = 1.0 / tl.sqrt(var + eps)
    lo = c * chunk
    hi = tl.minimum(lo + chunk, n)
    dst = out_ptr + row * n
    for start in range(lo, hi, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < hi
        y = (tl.load(src + cols, mask=mask, other=0.0).to(tl.float32) - mean) * rstd
        if HAS_W:
            y = y * tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        if HAS_B:
            y = y + tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(dst + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def norm_split_rows(view: torch.Tensor, w: torch.Tensor, b: torch.Tensor, out: torch.Tensor,
                    eps: float, flags: dict[str, bool], align: int, chunk: int,
                    block: int) -> None:
    """layer_norm (flags["RMS"] False) or rms_norm of each row of `view` into `out` (rows
    contiguous), each row cut into chunks of `chunk` elements (a multiple of `block`); `w` and
    `b` as the looped kernel takes them (flags HAS_W, HAS_B say whether they are real)."""
    m, n = view.shape
    chunks = cdiv(n, chunk)
    parts = torch.empty((m, chunks, 2), dtype=torch.float32, device=view.device)
    kernel: Any = _norm_chunk_stats_kernel
    kernel[(m, chunks)](view, parts, n, view.stride(0), chunk, chunks, RMS=flags["RMS"],
                        BLOCK_N=block, ALIGN=align, num_warps=SPLIT_WARPS)
    # The output pass walks its chunk in half tiles: at 4096 elements on 8 warps, rows off 16
    # bytes (2-byte loads of x, weight and bias) took 80-109 registers and fp16 spilled 36
    # bytes a thread (ptxas, sm_90); at 2048, 32-52 registers, none spilled.
    kernel = _norm_chunk_out_kernel
    kernel[(m, chunks)](view, w, b, parts, out, n, view.stride(0), chunk, chunks, eps, **flags,
                        BLOCK_N=max(1, block // 2), CHUNKS=max(2, next_power_of_2(chunks)),
                        ALIGN=align, num_warps=SPLIT_WARPS)
