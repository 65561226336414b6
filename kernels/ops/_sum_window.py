"""Sums over very long 16-bit rows whose starts are not 16-byte aligned: each row read through a
window that starts on the 16-byte boundary at or before it.

A row of 6478395 fp16 elements starts 6 bytes further from a 16-byte boundary than the row
before it, so the compiler cannot prove any row start aligned and reads every element with a
2-byte load. Here the window starts at the row's offset rounded down to 8 elements, which the
compiler sees is a multiple of 8; a sum does not care where its tiles start, so every tile but
the first and the last is read unmasked in 16-byte vectors.

One H200 A/B (2026-11-27, x torch launch-inclusive, plain kernel -> windows): 8x6478395 fp16
mean 0.87 -> 0.99, 1x14667795 bf16 slice sum 0.85 -> 1.00, 3x4194303 fp16 0.95 -> 1.08,
64x262143 fp16 1.07 -> 1.21; rows of a few thousand elements, many of them, lost
(8192x5348 bf16 sum 1.02 -> 0.82, 16384x3539 fp16 0.96 -> 0.88), so only rows from
WINDOW_MIN_ROW elements take this path.
"""
# Triton kernels take DSL-typed arguments that Python annotations cannot express.
# mypy: disable-error-code="untyped-decorator,no-untyped-def"

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl

VECTOR_BYTES = 16
WINDOW_MIN_ROW = 65536


def takes_sum_window(src: torch.Tensor, r: int, s_outer: int) -> bool:
    """Rows of at least WINDOW_MIN_ROW 16-bit elements, summed one a program, whose starts are
    not all 16-byte aligned (a row length or step that is not a multiple of 8), in a tensor
    that starts on 16 bytes."""
    per_vector = VECTOR_BYTES // src.element_size()
    return (src.element_size() == 2 and r >= WINDOW_MIN_ROW
            and (r % per_vector != 0 or s_outer % per_vector != 0)
            and src.data_ptr() % VECTOR_BYTES == 0)


@triton.jit
def _sum_window_kernel(x_ptr, out_ptr, m, r, stride_row, chunk, scale, BLOCK_R: tl.constexpr,
                       VEC: tl.constexpr):
    # Row `row`, elements [split * chunk, ...) of it, read through a window from the 16-byte
    # boundary at or before them: a sum does not care where a tile starts.
    row = tl.program_id(0).to(tl.int64)
    split = tl.program_id(1)
    first = split * chunk
    start = row * stride_row + first
    base = (start // VEC) * VEC
    lo = (start - base).to(tl.int32)
    hi = lo + tl.minimum(first + chunk, r) - first
    src = x_ptr + base
    inner_end = (hi // BLOCK_R) * BLOCK_R
    cols = tl.arange(0, BLOCK_R)
    acc = tl.load(src + cols, mask=(cols >= lo) & (cols < hi), other=0.0).to(tl.float32)
    for tile in range(BLOCK_R, inner_end, BLOCK_R):
        acc += tl.load(src + tile + cols).to(tl.float32)
    if (inner_end > 0) & (inner_end < hi):
        tail = inner_end + cols
        acc += tl.load(src + tail, mask=tail < hi, other=0.0).to(tl.float32)
    total = tl.sum(acc, axis=0) * scale
    tl.store(out_ptr + split.to(tl.int64) * m + row, total.to(out_ptr.dtype.element_ty))


def sum_window_rows(src: torch.Tensor, dst: torch.Tensor, outer: int, r: int, s_outer: int,
                    chunk: int, scale: float, block_r: int, splits: int, warps: int) -> None:
    """dst[split * outer + row] = scale * the sum of row `row`'s elements [split * chunk,
    (split + 1) * chunk), one row a program, for rows `takes_sum_window` accepts."""
    kernel: Any = _sum_window_kernel
    kernel[(outer, splits)](src, dst, outer, r, s_outer, chunk, scale, BLOCK_R=block_r,
                            VEC=VECTOR_BYTES // src.element_size(), num_warps=warps)
