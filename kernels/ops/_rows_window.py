"""Softmax over long 16-bit rows whose length is not a multiple of 8: each row read through a
window that starts on the 16-byte boundary at or before the row.

A contiguous row of 50257 bf16 elements starts 2 bytes further from a 16-byte boundary than the
row before it, so the compiler cannot prove any row start aligned and reads every element with
a 2-byte load. One H200 A/B (2026-11-27, x torch launch-inclusive) put the long-row kernel's
16-bit rows of odd lengths at 0.69-0.90x (4096x50257 bf16 log_softmax 0.69, softmax 0.81;
367x50257 bf16 log_softmax 0.77; 569x100277 bf16 0.87; 389x102239 fp16 0.90) and those whose
length divides by 8 at 1.06-1.74x (503x50304 bf16 1.06, 1334x50304 bf16 softmax 1.23,
2048x32000 bf16 1.47-1.74, 1000x151936 bf16 1.35-1.44). fp32 rows of odd lengths were not slow
(4096x50257 fp32 softmax 1.25x), so this path is for 16-bit rows only.

Here the window starts at the row's offset rounded down to 8 elements, which the compiler sees
is a multiple of 8: the first tile (up to 7 elements of the row before masked off) and the last
(past the row's end) are masked, every tile between is read and written unmasked in 16-byte
vectors. The output is contiguous like the input, so its rows sit at the same offsets and take
the same windows.
"""
# Triton kernels take DSL-typed arguments that Python annotations cannot express.
# mypy: disable-error-code="untyped-decorator,no-untyped-def"

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl

from flagbot.kernels.ops._rows_split import softmax_of_rows

VECTOR_BYTES = 16


def takes_window(view: torch.Tensor, out: torch.Tensor) -> bool:
    """Rows for the windowed kernel: 16-bit, contiguous, both tensors starting on 16 bytes,
    and a row length that leaves row starts unaligned (aligned ones vectorise as they are)."""
    n = view.shape[1]
    per_vector = VECTOR_BYTES // view.element_size()
    return (view.element_size() == 2 and view.stride(1) == 1 and view.stride(0) == n
            and out.stride(0) == n and n % per_vector != 0
            and view.data_ptr() % VECTOR_BYTES == 0 and out.data_ptr() % VECTOR_BYTES == 0)


@triton.jit
def _tile_stats(src, start, lo, hi, run_max, run_sum, BLOCK_N: tl.constexpr,
                MASKED: tl.constexpr):
    """Fold elements [start, start + BLOCK_N) of the window, those within [lo, hi), into the
    row's running max and sum of exponentials (one cross-lane reduction a tile, as the plain
    long-row kernel: per-lane running values lost on 4096x50257 bf16 in a tile run)."""
    cols = start + tl.arange(0, BLOCK_N)
    if MASKED:
        x = tl.load(src + cols, mask=(cols >= lo) & (cols < hi),
                    other=-float("inf")).to(tl.float32)
    else:
        x = tl.load(src + cols).to(tl.float32)
    new_max = tl.maximum(run_max, tl.max(x, axis=0))
    # a row that opens with a tile of -inf (a masked prefix) keeps sum 0, not exp(nan)
    safe = tl.where(new_max == -float("inf"), 0.0, new_max)
    run_sum = run_sum * tl.exp(run_max - safe) + tl.sum(tl.exp(x - safe), axis=0)
    return new_max, run_sum


@triton.jit
def _tile_out(src, dst, start, lo, hi, row_max, row_sum, log_sum, LOG: tl.constexpr,
              BLOCK_N: tl.constexpr, MASKED: tl.constexpr):
    cols = start + tl.arange(0, BLOCK_N)
    if MASKED:
        mask = (cols >= lo) & (cols < hi)
        x = tl.load(src + cols, mask=mask, other=0.0).to(tl.float32)
    else:
        x = tl.load(src + cols).to(tl.float32)
    if LOG:
        y = x - row_max - log_sum
    else:
        y = tl.exp(x - row_max) / row_sum
    if MASKED:
        tl.store(dst + cols, y.to(dst.dtype.element_ty), mask=mask)
    else:
        tl.store(dst + cols, y.to(dst.dtype.element_ty))


@triton.jit
def _softmax_window_kernel(x_ptr, out_ptr, n, LOG: tl.constexpr, BLOCK_N: tl.constexpr,
                           VEC: tl.constexpr):
    row_start = tl.program_id(0).to(tl.int64) * n
    base = (row_start // VEC) * VEC  # the window's start: a multiple of VEC the compiler sees
    lo = (row_start - base).to(tl.int32)  # the row within the window: [lo, hi)
    hi = lo + n
    src = x_ptr + base
    dst = out_ptr + base
    inner_end = (hi // BLOCK_N) * BLOCK_N  # tiles 1 .. inner_end / BLOCK_N - 1 are whole
    has_tail = (inner_end > 0) & (inner_end < hi)
    run_max, run_sum = _tile_stats(src, 0, lo, hi, -float("inf"), 0.0, BLOCK_N, True)
    for start in range(BLOCK_N, inner_end, BLOCK_N):
        run_max, run_sum = _tile_stats(src, start, lo, hi, run_max, run_sum, BLOCK_N, False)
    if has_tail:
        run_max, run_sum = _tile_stats(src, inner_end, lo, hi, run_max, run_sum, BLOCK_N,
                                       True)
    row_max, row_sum = run_max, run_sum
    log_sum = tl.log(row_sum)
    # Output last tile first: the statistics pass read the row front to back, so its end is
    # what the L2 cache most likely still holds.
    if has_tail:
        _tile_out(src, dst, inner_end, lo, hi, row_max, row_sum, log_sum, LOG, BLOCK_N, True)
    whole = inner_end // BLOCK_N - 1
    for i in range(0, whole):
        start = (whole - i) * BLOCK_N
        _tile_out(src, dst, start, lo, hi, row_max, row_sum, log_sum, LOG, BLOCK_N, False)
    _tile_out(src, dst, 0, lo, hi, row_max, row_sum, log_sum, LOG, BLOCK_N, True)


# Short rows (33-512 elements) whose starts are off 16 bytes: a program takes SHORT_ROWS rows,
# a multiple of 8, so that its rows together start and end on 16 bytes; it reads them as one
# flat stretch in 16-byte vectors and regroups them into rows in registers (tl.gather, through
# shared memory). The record's worst such rows read 2-byte elements: 13799x33 fp16 log_softmax
# 0.63x torch (H100), 0.79x after more programs (H200); 91437x63 bf16 0.70x; 103217x113 fp16
# 0.82x; 16384x141 bf16 0.85x; 65535x257 bf16 0.86x.
SHORT_SPAN = (33, 512)
SHORT_ROWS = 8


def takes_short_window(view: torch.Tensor, out: torch.Tensor) -> bool:
    """Short rows for the flat kernel: as `takes_window`, of SHORT_SPAN's lengths, at least one
    program's worth."""
    n = view.shape[1]
    return (SHORT_SPAN[0] <= n <= SHORT_SPAN[1] and view.shape[0] >= SHORT_ROWS
            and takes_window(view, out))


@triton.jit
def _flat_rows(x_ptr, out_ptr, start, span, n, LOG: tl.constexpr, ROWS: tl.constexpr,
               SEG: tl.constexpr, FLAT: tl.constexpr):
    """softmax of the rows in elements [start, start + span) of a contiguous tensor (whole rows
    of `n`), read and written as one flat stretch."""
    j = tl.arange(0, FLAT)
    flat_mask = j < span
    x = tl.load(x_ptr + start + j, mask=flat_mask, other=0.0).to(tl.float32)
    # rows in registers: element (r, c) is flat element r * n + c
    r = tl.arange(0, ROWS * SEG) // SEG
    c = tl.arange(0, ROWS * SEG) % SEG
    in_row = (c < n) & (r * n < span)
    rows = tl.gather(x, tl.where(in_row, r * n + c, 0), 0).reshape(ROWS, SEG)
    mask = in_row.reshape(ROWS, SEG)
    y = softmax_of_rows(tl.where(mask, rows, -float("inf")), mask, LOG)
    # back to flat order: flat element f is row f // n, column f - row * n. The row comes from
    # one multiply in fp32 instead of an integer division per element (~20 instructions, more
    # than the element's share of the memory time): (f + 0.5) / n is never within 2^-10 of an
    # integer for n <= 512 (SHORT_SPAN) and f < 2^12, far beyond fp32's rounding there.
    row = ((j.to(tl.float32) + 0.5) * (1.0 / n)).to(tl.int32)
    back = tl.where(flat_mask, row * SEG + (j - row * n), 0)
    y_flat = tl.gather(y.reshape(ROWS * SEG), back, 0)
    tl.store(out_ptr + start + j, y_flat.to(out_ptr.dtype.element_ty), mask=flat_mask)


@triton.jit
def _softmax_short_window_kernel(x_ptr, out_ptr, m, n, LOG: tl.constexpr, ROWS: tl.constexpr,
                                 SEG: tl.constexpr, FLAT: tl.constexpr):
    pid = tl.program_id(0)
    start = pid.to(tl.int64) * ROWS * n  # ROWS is a multiple of 8: a 16-byte boundary
    if pid < m // ROWS:
        # ROWS * n elements: a bound the compiler sees is a multiple of 8, so the masked flat
        # accesses stay 16-byte vectors
        _flat_rows(x_ptr, out_ptr, start, ROWS * n, n, LOG, ROWS, SEG, FLAT)
    else:  # the last, partial program
        _flat_rows(x_ptr, out_ptr, start, (m - pid * ROWS) * n, n, LOG, ROWS, SEG, FLAT)


def softmax_short_window_rows(view: torch.Tensor, out: torch.Tensor, log: bool) -> None:
    """softmax (or log_softmax) of each row of `view` into `out`, SHORT_ROWS rows a program,
    for rows `takes_short_window` accepts."""
    m, n = view.shape
    seg = triton.next_power_of_2(n)
    flat = triton.next_power_of_2(SHORT_ROWS * n)
    kernel: Any = _softmax_short_window_kernel
    # at least two warps: a gather across warps goes through shared memory, one within a
    # single warp through shuffles, several per element
    kernel[(triton.cdiv(m, SHORT_ROWS),)](view, out, m, n, LOG=log, ROWS=SHORT_ROWS, SEG=seg,
                                          FLAT=flat, num_warps=max(2, min(8, flat // 512)))


def takes_sum_window(src: torch.Tensor, r: int, s_outer: int) -> bool:
    """Long 16-bit rows summed one a program whose starts are not all 16-byte aligned (a row
    length or step that is not a multiple of 8), in a tensor that starts on 16 bytes."""
    return (src.element_size() == 2 and (r % 8 != 0 or s_outer % 8 != 0)
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


def softmax_window_rows(view: torch.Tensor, out: torch.Tensor, log: bool, block: int,
                        warps: int) -> None:
    """softmax (or log_softmax) of each row of `view` into `out`, one program a row, for rows
    `takes_window` accepts."""
    m, n = view.shape
    kernel: Any = _softmax_window_kernel
    kernel[(m,)](view, out, n, LOG=log, BLOCK_N=block,
                 VEC=VECTOR_BYTES // view.element_size(), num_warps=warps)

