"""Softmax over few very long rows: each row split into chunks that programs share.

One program per row (the looped kernel in _rows.py) leaves most of the GPU idle when there are
fewer rows than multiprocessors: 8 rows of 1,000,003 fp32 elements ran at 5% of copy
bandwidth on an H100 (2026-11-26). Here a first launch writes each chunk's running max and sum
of exponentials (fp32, two numbers per chunk), and a second launch combines a row's chunk
statistics and writes that chunk's output: two launches and a tiny allocation, against up to
hundreds of programs streaming the rows.
"""
# Triton kernels take DSL-typed arguments that Python annotations cannot express.
# mypy: disable-error-code="untyped-decorator,no-untyped-def"

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl

from flagbot.kernels.ops._host import cdiv, next_power_of_2

SPLIT_TARGET = 528  # programs wanted: four per multiprocessor on a 132-SM part
# From this many rows one program a row is faster than splitting: the second launch and the
# statistics pass cost more than the idle multiprocessors (H100, 2026-11-26, x torch, split ->
# one program a row: 113x18839 bf16 log_softmax 0.77x -> 0.85x, 367x50257 bf16 softmax 0.73x ->
# 0.90x, 245x50257 fp16 softmax 0.81x -> 0.95x, 129x60868 fp16 log_softmax 0.84x -> 0.96x).
# Below it the split wins by far: with 64 here the sweeps read 64x200064 fp16 softmax 1.75x ->
# 0.96x, 65x100277 bf16 1.28x -> 0.81x, 97x151936 fp16 1.32x -> 0.97x; 107 rows ran alike.
SPLIT_MAX_ROWS = 100
SPLIT_BLOCK, SPLIT_WARPS = 4096, 8
MIN_CHUNK_TILES = 2  # a chunk is at least this many tiles, so the statistics stay negligible


@triton.jit
def _chunk_stats_kernel(x_ptr, part_ptr, n, stride_row, chunk, chunks, BLOCK_N: tl.constexpr,
                        ALIGN: tl.constexpr):
    n = (n // ALIGN) * ALIGN  # exact: tells the compiler it divides
    stride_row = (stride_row // ALIGN) * ALIGN  # exact: tells the compiler it divides
    row = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1)
    src = x_ptr + row * stride_row
    lo = c * chunk
    hi = tl.minimum(lo + chunk, n)
    # Per-lane running max and sum: one cross-lane reduction at the end, not one per tile.
    run_max = tl.full([BLOCK_N], -float("inf"), tl.float32)
    run_sum = tl.zeros([BLOCK_N], tl.float32)
    for start in range(lo, hi, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(src + cols, mask=cols < hi, other=-float("inf")).to(tl.float32)
        new_max = tl.maximum(run_max, x)
        safe = tl.where(new_max == -float("inf"), 0.0, new_max)
        run_sum = run_sum * tl.exp(run_max - safe) + tl.exp(x - safe)
        run_max = new_max
    m = tl.max(run_max, axis=0)
    safe_m = tl.where(m == -float("inf"), 0.0, m)
    s = tl.sum(run_sum * tl.exp(run_max - safe_m), axis=0)
    dst = part_ptr + (row * chunks + c) * 2
    tl.store(dst, m)
    tl.store(dst + 1, s)


@triton.jit
def _chunk_out_kernel(x_ptr, part_ptr, out_ptr, n, stride_row, chunk, chunks,
                      LOG: tl.constexpr, BLOCK_N: tl.constexpr, CHUNKS: tl.constexpr,
                      ALIGN: tl.constexpr):
    n = (n // ALIGN) * ALIGN  # exact: tells the compiler it divides
    stride_row = (stride_row // ALIGN) * ALIGN  # exact: tells the compiler it divides
    row = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1)
    k = tl.arange(0, CHUNKS)
    parts = part_ptr + (row * chunks + k) * 2
    pm = tl.load(parts, mask=k < chunks, other=-float("inf"))
    ps = tl.load(parts + 1, mask=k < chunks, other=0.0)
    row_max = tl.max(pm, axis=0)
    row_sum = tl.sum(tl.where(k < chunks, ps * tl.exp(pm - row_max), 0.0), axis=0)
    lo = c * chunk
    write_span(x_ptr + row * stride_row, out_ptr + row * n, lo, tl.minimum(lo + chunk, n),
               row_max, row_sum, LOG, BLOCK_N)


@triton.jit
def write_span(src, dst, lo, hi, row_max, row_sum, LOG: tl.constexpr, BLOCK_N: tl.constexpr):
    """Elements [lo, hi) of one row's softmax (or log_softmax) from its max and sum of
    exponentials: the output pass shared by the looped and split long-row kernels."""
    log_sum = tl.log(row_sum)
    # Last tile first: the statistics pass has just read the row front to back, so its end is
    # what the L2 cache most likely still holds (hundreds of 100-KB vocabulary rows in flight
    # at once are more than the cache holds; read front first, each would miss throughout).
    tiles = tl.cdiv(hi - lo, BLOCK_N)
    for i in range(0, tiles):
        start = lo + (tiles - 1 - i) * BLOCK_N
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < hi
        x = tl.load(src + cols, mask=mask, other=0.0).to(tl.float32)
        if LOG:
            y = x - row_max - log_sum
        else:
            y = tl.exp(x - row_max) / row_sum
        tl.store(dst + cols, y.to(dst.dtype.element_ty), mask=mask)


def split_chunks(m: int, n: int, block: int = SPLIT_BLOCK) -> int:
    """Chunk length (a multiple of `block`) for m rows of n elements; n itself when splitting
    would not pay (SPLIT_MAX_ROWS rows or more, or rows of few tiles)."""
    if m >= SPLIT_MAX_ROWS:
        return n
    tiles = cdiv(n, block)
    per_row = min(cdiv(SPLIT_TARGET, max(m, 1)), tiles // MIN_CHUNK_TILES)
    if per_row <= 1:
        return n
    return int(cdiv(tiles, per_row)) * block


def softmax_split_rows(view: torch.Tensor, out: torch.Tensor, log: bool, align: int,
                       chunk: int, block: int = SPLIT_BLOCK) -> None:
    """softmax (or log_softmax) of each row of `view` (rows contiguous) into `out`, each row
    cut into chunks of `chunk` elements (a multiple of `block`)."""
    m, n = view.shape
    chunks = cdiv(n, chunk)
    parts = torch.empty((m, chunks, 2), dtype=torch.float32, device=view.device)
    kernel: Any = _chunk_stats_kernel
    kernel[(m, chunks)](view, parts, n, view.stride(0), chunk, chunks, BLOCK_N=block,
                        ALIGN=align, num_warps=SPLIT_WARPS)
    kernel = _chunk_out_kernel
    kernel[(m, chunks)](view, parts, out, n, view.stride(0), chunk, chunks, LOG=log,
                        BLOCK_N=block, CHUNKS=max(2, next_power_of_2(chunks)),
                        ALIGN=align, num_warps=SPLIT_WARPS)

