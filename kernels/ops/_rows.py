"""Row-wise kernels shared by softmax, log_softmax, layer_norm and rms_norm.

A tensor is seen as [outer, R, inner] around the dim an op works along:
- inner == 1 (the last dim): rows of R elements at a row stride. Rows up to MAX_ROW_BLOCK live in
  registers, several short rows per program; longer rows loop over tiles twice (statistics,
  then output), the second read mostly served from L2.
- inner > 1 (softmax over an earlier dim): each program owns BLOCK_I neighbouring columns and
  walks down R, so every load is a contiguous segment of a row.
"""
# Triton kernels take DSL-typed arguments that Python annotations cannot express.
# mypy: disable-error-code="untyped-decorator,no-untyped-def"

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import triton
import triton.language as tl

from flagbot.kernels.ops._host import cdiv, fewer_rows, next_power_of_2
from flagbot.kernels.ops._layout import as_contiguous_permutation, inverse
from flagbot.kernels.ops._norm_split import norm_split_rows
from flagbot.kernels.ops._rows_split import (
    SPLIT_BLOCK,
    softmax_split_rows,
    split_chunks,
    write_span,
)

# A whole row lives in registers up to this many elements; longer rows take the looped path.
MAX_ROW_BLOCK = 16384
# rms_norm reads a row twice either way, so splitting its rows only adds a launch and pays only
# where one program a row is far from the copy bandwidth: rows over this many bytes (H200 A/B,
# 2026-11-27, device time one program a row -> split: 16x21332 bf16 8.4 -> 12.2 us, 2x16385
# fp32 11.6 -> 15.0, 53x32768 fp16 9.8 -> 12.0, 8x50304 fp16 11.7 -> 12.3; above it
# 8x65024 fp16 13.5 -> 10.7, 8x32000 fp32 13.0 -> 10.5, 2x175141 bf16 70.2 -> 15.5). layer_norm's
# one-program kernel makes an extra pass for the mean, and the split gained on every row there.
RMS_SPLIT_BYTES = 100 << 10  # scaled with max_row_block, so that small tests reach both sides
# Tile and warps of the looped path (H200, 2026-11-26, 4096x50257 fp32 softmax: 8192/16 706 us,
# 4096/8 824 us, 2048/4 971 us; 16-bit rows moved less with the tile size).
LONG_BLOCK, LONG_WARPS = 8192, 16
ROW_TILE = 4096  # elements per program when several short rows share one
COLS_PROGRAMS = 512  # programs wanted by the column kernel (earlier dims)
# Below / above these: copy, then rows (13x4951 bf16 transposed, one program of 16 columns
# walking 4951 rows twice: 0.22x torch on an H100, 2026-11-26, 1.07x copied); under
# COPY_MIN_ELEMENTS the copy's own launch costs more (2048x2 fp16 over dim 0: 1.43x walked,
# 0.85x copied)
FEW_COLUMN_PROGRAMS, LONG_COLUMNS, COPY_MIN_ELEMENTS = 32, 1024, 8192


def row_block(n: int) -> int:
    """The power-of-two tile that holds a row of `n` elements."""
    return next_power_of_2(n)


def row_warps(block: int) -> int:
    """Warps per program: enough threads that each holds at most ~16 elements of the tile."""
    if block <= 1024:
        return 4
    if block <= 4096:
        return 8
    return 16


def alignment(*values: int) -> int:
    """The largest power of two up to 16 dividing every value: row starts and row ends fall on
    that many elements. Kernels rewrite such a value as (v // ALIGN) * ALIGN, equal to v, which
    the compiler can see divides by ALIGN: vector accesses where Triton's own specialisation
    (divisibility by 16) does not apply, such as rows of 5000."""
    bits = 0
    for v in values:
        bits |= v
    # the lowest set bit of them all is the largest power of two dividing every value
    # (0.24 us a call where trying 16, 8, 4, 2 took 0.7-1.7; mm states six of them a launch)
    return min(16, bits & -bits) if bits else 16


@dataclass(frozen=True)
class RowsConfig:
    """The short-row kernels' launch (benchmarks, tests): `rows` rows per program (a power of
    two), `warps` per program."""

    rows: int
    warps: int


@dataclass(frozen=True)
class LoopConfig:
    """The looped norm kernel's launch: one row a program, walked in tiles of `tile` elements
    (a power of two) by `warps` warps."""

    tile: int
    warps: int


# softmax's short rows: small tiles, 1-4 warps, enough programs (H100, 2026-11-26, 38 shapes x
# up to 40 launches, benchmarks/bench_row_tiles.py, then three random sweeps; x torch):
# 4096-element tiles at 8 warps left 33x4654x129 bf16 at 0.56x, 64x2207x129 fp16 log_softmax
# at 0.39x; 4 rows of 256 at 2 warps 1.03x, 0.95x. A second tile run (23 shapes): rows of
# 33-64 elements take 8 rows at 1 warp (262144x33 fp32 log_softmax 0.76x -> 1.26x, 65535x33
# bf16 0.83x -> 1.01x, 10976x59 fp32 0.87x -> 1.07x), rows of 17-32 8 rows at 2 warps
# (38x644x17 fp32 best, 6.50 us vs torch 6.94), rows of 65-128 twice the programs (2047x73
# fp32 log_softmax: 4 rows a program 0.94x, 2 rows 1.01x). Rows of 2048 and more keep the
# shared tile and warps.
SHORT_ROWS_TILE, TINY_ROWS_TILE, SHORT_ROWS_PROGRAMS = 1024, 256, 264
# (rows, warps) for rows of 32 and 64 elements; programs wanted for rows of 128
NARROW_ROWS = {32: (8, 2), 64: (8, 1)}
ROWS_128_PROGRAMS = 528
# Rows of 33-64 in 1-warp programs: fewer rows a program until there are about 16 warps per
# multiprocessor. 264 such programs are 2 warps a multiprocessor, too few to hide a load's
# latency: 13799x33 fp16 log_softmax at 8 rows (1725 programs) read 0.63x torch (H100 random
# sweep, 2026-11-27); with 8192 programs and more (65535x33 bf16) 8 rows stay best (4 rows
# 0.85x vs 1.01x, tile run 2026-11-26), and 10976x59 fp32 read 1.05x at 4 rows, 1.07x at 8.
NARROW_ROWS_PROGRAMS = 2112


def softmax_rows_config(m: int, block: int) -> RowsConfig:
    """The short-row softmax launch for `m` rows of `block` (a power of two) elements."""
    if block >= 2048:
        rows = rows_of(block)
        return RowsConfig(rows, row_warps(block * rows))
    narrow = NARROW_ROWS.get(block)
    rows = narrow[0] if narrow else max(
        1, (SHORT_ROWS_TILE if block >= 32 else TINY_ROWS_TILE) // block)
    rows = fewer_rows(rows, m, ROWS_128_PROGRAMS if block == 128
                      else NARROW_ROWS_PROGRAMS if block == 64 else SHORT_ROWS_PROGRAMS)
    if narrow:
        return RowsConfig(rows, narrow[1])
    return RowsConfig(rows, min(2 if block >= 32 else 4, max(1, block * rows // 32)))


def rows_of(block: int) -> int:
    """Rows per program for rows of `block` (power of two) elements."""
    return max(1, ROW_TILE // block)


@triton.jit
def _softmax_rows_kernel(x_ptr, out_ptr, m, n, stride_row, LOG: tl.constexpr,
                         BLOCK_N: tl.constexpr, ROWS: tl.constexpr, ALIGN: tl.constexpr):
    n = (n // ALIGN) * ALIGN  # exact: tells the compiler it divides
    stride_row = (stride_row // ALIGN) * ALIGN  # exact: tells the compiler it divides
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < m) & (cols[None, :] < n)
    x = tl.load(x_ptr + rows[:, None] * stride_row + cols[None, :], mask=mask,
                other=-float("inf")).to(tl.float32)
    # Rows past m are all -inf: their NaNs are never stored.
    shifted = x - tl.max(x, axis=1)[:, None]
    e = tl.where(mask, tl.exp(shifted), 0.0)
    s = tl.sum(e, axis=1)[:, None]
    if LOG:
        y = shifted - tl.log(s)
    else:
        y = e / s
    tl.store(out_ptr + rows[:, None] * n + cols[None, :], y.to(out_ptr.dtype.element_ty),
             mask=mask)


@triton.jit
def _softmax_long_kernel(x_ptr, out_ptr, n, stride_row, LOG: tl.constexpr,
                         BLOCK_N: tl.constexpr, ALIGN: tl.constexpr):
    n = (n // ALIGN) * ALIGN  # exact: tells the compiler it divides
    stride_row = (stride_row // ALIGN) * ALIGN  # exact: tells the compiler it divides
    # Pass 1: running max and sum over tiles (one exp per element: the tile's own max first).
    row = tl.program_id(0).to(tl.int64)
    src = x_ptr + row * stride_row
    dst = out_ptr + row * n
    run_max = -float("inf")
    run_sum = 0.0
    for start in range(0, n, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(src + cols, mask=cols < n, other=-float("inf")).to(tl.float32)
        new_max = tl.maximum(run_max, tl.max(x, axis=0))
        # a row that opens with a tile of -inf (a masked prefix) keeps sum 0, not exp(nan)
        safe = tl.where(new_max == -float("inf"), 0.0, new_max)
        run_sum = run_sum * tl.exp(run_max - safe) + tl.sum(tl.exp(x - safe), axis=0)
        run_max = new_max
    write_span(src, dst, 0, n, run_max, run_sum, LOG, BLOCK_N)


@triton.jit
def _softmax_cols_kernel(x_ptr, out_ptr, r, inner, tiles_i, LOG: tl.constexpr,
                         BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr, ONE_TILE: tl.constexpr,
                         ALIGN_I: tl.constexpr):
    # exact: tells the compiler the columns' bound and row step divide (unseen, the column
    # mask splits every load into single elements)
    inner = (inner // ALIGN_I) * ALIGN_I
    pid = tl.program_id(0)
    outer = (pid // tiles_i).to(tl.int64)
    cols = (pid % tiles_i) * BLOCK_I + tl.arange(0, BLOCK_I)
    col_mask = cols < inner
    base = outer * r * inner
    rr = tl.arange(0, BLOCK_R)
    if ONE_TILE:
        mask = (rr[:, None] < r) & col_mask[None, :]
        offs = base + rr[:, None].to(tl.int64) * inner + cols[None, :]
        x = tl.load(x_ptr + offs, mask=mask, other=-float("inf")).to(tl.float32)
        shifted = x - tl.max(x, axis=0)[None, :]
        e = tl.where(mask, tl.exp(shifted), 0.0)
        s = tl.sum(e, axis=0)[None, :]
        if LOG:
            y = shifted - tl.log(s)
        else:
            y = e / s
        tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)
    else:
        run_max = tl.full([BLOCK_I], -float("inf"), tl.float32)
        run_sum = tl.zeros([BLOCK_I], tl.float32)
        for start in range(0, r, BLOCK_R):
            rows = start + rr
            mask = (rows[:, None] < r) & col_mask[None, :]
            offs = base + rows[:, None].to(tl.int64) * inner + cols[None, :]
            x = tl.load(x_ptr + offs, mask=mask, other=-float("inf")).to(tl.float32)
            new_max = tl.maximum(run_max, tl.max(x, axis=0))
            # Columns past `inner` stay at -inf throughout: keep their (unused) sums finite.
            safe_max = tl.where(new_max == -float("inf"), 0.0, new_max)
            run_sum = (run_sum * tl.exp(run_max - safe_max)
                       + tl.sum(tl.exp(x - safe_max[None, :]), axis=0))
            run_max = new_max
        log_sum = tl.log(run_sum)
        for start in range(0, r, BLOCK_R):
            rows = start + rr
            mask = (rows[:, None] < r) & col_mask[None, :]
            offs = base + rows[:, None].to(tl.int64) * inner + cols[None, :]
            x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
            if LOG:
                y = x - run_max[None, :] - log_sum[None, :]
            else:
                y = tl.exp(x - run_max[None, :]) / run_sum[None, :]
            tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


def cols_block(outer: int, inner: int) -> int:
    """Columns per program when reducing over an earlier dim: up to 64 for long coalesced
    segments, fewer (down to 16) when that would leave too few programs to fill the GPU."""
    block = min(next_power_of_2(inner), 64)
    while block > 16 and outer * cdiv(inner, block) < COLS_PROGRAMS:
        block //= 2
    return block


def rows_view(x: torch.Tensor, n: int) -> torch.Tensor | None:
    """`x` as a [rows, n] view whose rows are contiguous (any row stride); None if no such view."""
    try:
        view = x.view(-1, n)
    except RuntimeError:
        return None
    return view if n == 1 or view.stride(1) == 1 else None


def softmax_any_dim(name: str, x: torch.Tensor, dim: int, dtype: torch.dtype | None,
                    log: bool, max_row_block: int = MAX_ROW_BLOCK,
                    config: RowsConfig | None = None) -> torch.Tensor:
    """softmax (log=False) or log_softmax (log=True) of `x` along `dim`, fp32 arithmetic;
    `config` forces the short-row kernel's launch."""
    if not isinstance(dim, int) or not -max(x.dim(), 1) <= dim < max(x.dim(), 1):
        raise IndexError(f"{name}: dim {dim!r} out of range for a {x.dim()}-dim tensor")
    if dtype is not None:
        x = x.to(dtype)
    if x.dtype not in (torch.float32, torch.float16, torch.bfloat16):
        raise NotImplementedError(f"{name}: float32/float16/bfloat16 only, got {x.dtype}")
    if x.dim() == 0:
        x1 = softmax_any_dim(name, x.reshape(1), 0, None, log, max_row_block, config)
        return x1.reshape(())
    d = dim % x.dim()
    if x.numel() == 0:
        return torch.empty_like(x)
    r = x.shape[d]
    if d == x.dim() - 1:
        view = rows_view(x, r)
        if view is not None:
            out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
            _launch_rows(view, out, log, max_row_block, config)
            return out
    src, order = as_contiguous_permutation(x)
    d_src = order.index(d)
    out = torch.empty_like(src)
    inner = 1
    for size in src.shape[d_src + 1:]:
        inner *= size
    if inner == 1:
        _launch_rows(src.view(-1, r), out, log, max_row_block, config)
    elif (src.numel() // (r * inner)) * cdiv(inner, 64) < FEW_COLUMN_PROGRAMS \
            and r >= LONG_COLUMNS and r * inner > COPY_MIN_ELEMENTS:
        # A few columns down a long dim (softmax along the rows of a transposed [11, 200064]
        # tensor): the column kernel would give one program per 64 columns, each walking the
        # whole dim twice (0.04x torch on an H100). One copy that makes the dim last, then
        # the row kernels, costs two extra passes instead.
        rows = src.movedim(d_src, -1).contiguous()
        done = torch.empty_like(rows)
        _launch_rows(rows.view(-1, r), done, log, max_row_block, config)
        return done.movedim(-1, d_src).permute(inverse(order))
    else:
        outer = src.numel() // (r * inner)
        block_i = cols_block(outer, inner)
        block_r = min(next_power_of_2(r), max(1, ROW_TILE // block_i))
        tiles_i = cdiv(inner, block_i)
        kernel: Any = _softmax_cols_kernel
        kernel[(outer * tiles_i,)](src, out, r, inner, tiles_i, LOG=log, BLOCK_R=block_r,
                                   BLOCK_I=block_i, ONE_TILE=r <= block_r,
                                   ALIGN_I=alignment(inner),
                                   num_warps=row_warps(block_r * block_i))
    return out.permute(inverse(order))


def _launch_rows(view: torch.Tensor, out: torch.Tensor, log: bool, max_row_block: int,
                 config: RowsConfig | None = None) -> None:
    m, n = view.shape
    block = row_block(n)
    kernel: Any
    if block <= max_row_block:
        cfg = config or softmax_rows_config(m, block)
        kernel = _softmax_rows_kernel
        kernel[(cdiv(m, cfg.rows),)](view, out, m, n, view.stride(0), LOG=log, BLOCK_N=block,
                                     ROWS=cfg.rows, ALIGN=alignment(n, view.stride(0)),
                                     num_warps=cfg.warps)
    elif (chunk := split_chunks(m, n, min(SPLIT_BLOCK, max_row_block))) < n:
        # fewer rows than the GPU has room for: chunks of each row go to separate programs
        softmax_split_rows(view, out, log, alignment(n, view.stride(0)), chunk,
                           min(SPLIT_BLOCK, max_row_block))
    else:
        tile = min(LONG_BLOCK, max_row_block)
        kernel = _softmax_long_kernel
        kernel[(m,)](view, out, n, view.stride(0), LOG=log, BLOCK_N=tile,
                     ALIGN=alignment(n, view.stride(0)), num_warps=LONG_WARPS)


@triton.jit
def _norm_rows_kernel(x_ptr, w_ptr, b_ptr, out_ptr, m, n, stride_row, eps, RMS: tl.constexpr,
                      HAS_W: tl.constexpr, HAS_B: tl.constexpr, BLOCK_N: tl.constexpr,
                      ROWS: tl.constexpr, ALIGN: tl.constexpr):
    n = (n // ALIGN) * ALIGN  # exact: tells the compiler it divides
    stride_row = (stride_row // ALIGN) * ALIGN  # exact: tells the compiler it divides
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    col_mask = cols < n
    mask = (rows[:, None] < m) & col_mask[None, :]
    x = tl.load(x_ptr + rows[:, None] * stride_row + cols[None, :], mask=mask,
                other=0.0).to(tl.float32)
    if RMS:
        d = x
    else:
        mean = tl.sum(x, axis=1) / n
        d = tl.where(mask, x - mean[:, None], 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=1) / n + eps)
    y = d * rstd[:, None]
    if HAS_W:
        y = y * tl.load(w_ptr + cols, mask=col_mask, other=0.0).to(tl.float32)[None, :]
    if HAS_B:
        y = y + tl.load(b_ptr + cols, mask=col_mask, other=0.0).to(tl.float32)[None, :]
    tl.store(out_ptr + rows[:, None] * n + cols[None, :], y.to(out_ptr.dtype.element_ty),
             mask=mask)


@triton.jit
def _norm_long_kernel(x_ptr, w_ptr, b_ptr, out_ptr, n, stride_row, eps, RMS: tl.constexpr,
                      HAS_W: tl.constexpr, HAS_B: tl.constexpr, BLOCK_N: tl.constexpr,
                      ALIGN: tl.constexpr):
    n = (n // ALIGN) * ALIGN  # exact: tells the compiler it divides
    stride_row = (stride_row // ALIGN) * ALIGN  # exact: tells the compiler it divides
    row = tl.program_id(0).to(tl.int64)
    src = x_ptr + row * stride_row
    dst = out_ptr + row * n
    # Moments about the row's first element: no cancellation when the mean dwarfs the spread.
    if RMS:
        shift = 0.0
    else:
        shift = tl.load(src).to(tl.float32)
    s1 = tl.zeros([BLOCK_N], tl.float32)
    s2 = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, n, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < n
        x = tl.load(src + cols, mask=mask, other=0.0).to(tl.float32)
        d = tl.where(mask, x - shift, 0.0)
        s1 += d
        s2 += d * d
    mean_d = tl.sum(s1, axis=0) / n
    if RMS:
        var = tl.sum(s2, axis=0) / n
        mean = 0.0
    else:
        var = tl.maximum(tl.sum(s2, axis=0) / n - mean_d * mean_d, 0.0)
        mean = shift + mean_d
    rstd = 1.0 / tl.sqrt(var + eps)
    for start in range(0, n, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < n
        x = tl.load(src + cols, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd
        if HAS_W:
            y = y * tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        if HAS_B:
            y = y + tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(dst + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


# Norms over many rows longer than 4096 that allow only accesses under 8 bytes (a row length or
# stride off a multiple of 4 elements for 16-bit, of 2 for fp32): the looped kernel in
# 1024-element tiles at 16 warps, not the whole row in registers nor 8192-element tiles. Such
# rows are read a few bytes an access either way, and small programs let more rows share a
# multiprocessor. H200 A/B, 2026-11-27, 2 rounds, launch-inclusive, earlier -> looped 1024/w16:
# 8573x5879 fp32 layer_norm 273 -> 136 us, 64x36x21761 fp16 layer_norm 215 -> 125, 5981x8193
# bf16 rms_norm 162 -> 101, 513x50257 bf16 layer_norm 109 -> 77; of 21 such rows 16 faster by
# over 5%, one slower (616x16385 fp32 rms_norm 43 -> 49). Rows read in 8- or 16-byte vectors
# lost (16384x8192 bf16 layer_norm 149 -> 202, 127x131072 fp16 40 -> 84, 5208x12884 bf16
# rms_norm 80 -> 93), as did fewer rows than two a multiprocessor (240x100277 bf16 rms_norm
# 73 -> 106, 256x215002 fp16 layer_norm 121 -> 168, 129x6170 bf16 rms_norm 6.3 -> 8.2).
WHOLE_ROW_MANY_ROWS, MANY_ROWS = 4096, 264
MANY_ROWS_TILE, MANY_ROWS_WARPS, MANY_ROWS_MAX_VECTOR = 1024, 16, 8


def norm_launch(m: int, n: int, vector_bytes: int,
                max_row_block: int = MAX_ROW_BLOCK) -> RowsConfig | LoopConfig:
    """The launch of one program per row (or rows) for m rows of n whose widest access is
    `vector_bytes` (the alignment of the row length and stride, in bytes): a RowsConfig for
    the whole-row kernel, else a LoopConfig (the caller may still split few long rows).
    Short rows share a program; those read in accesses under 16 bytes share one only while no
    fewer than SHORT_ROWS_PROGRAMS programs are launched (same A/B: 2032x21 bf16 layer_norm
    6.7 -> 4.8 us from 128 rows a program to 4, 8191x5 fp16 7.5 -> 4.7; of 76 such rows 68
    faster by over 5%, 2 slower: 4095x102 fp16 t 9.3 -> 10.6, 8x1x572 bf16 5.0 -> 5.2). Rows
    in 16-byte vectors keep their share: fewer rows a program narrowed each thread's accesses
    (1024x256 bf16 rms_norm 4.6 -> 5.6 us, 1040x256 bf16 layer_norm 4.9 -> 5.5)."""
    block = row_block(n)
    many = (m >= MANY_ROWS and block > WHOLE_ROW_MANY_ROWS
            and vector_bytes < MANY_ROWS_MAX_VECTOR)
    if block <= max_row_block and not many:
        rows = rows_of(block)
        if vector_bytes < 16:
            rows = fewer_rows(rows, m, SHORT_ROWS_PROGRAMS)
        return RowsConfig(rows, row_warps(block * rows))
    if many:
        return LoopConfig(min(MANY_ROWS_TILE, max_row_block), MANY_ROWS_WARPS)
    return LoopConfig(min(LONG_BLOCK, max_row_block), LONG_WARPS)


def norm_last_dims(name: str, x: torch.Tensor, normalized_shape: Any,
                   weight: torch.Tensor | None, bias: torch.Tensor | None, eps: float,
                   rms: bool, max_row_block: int = MAX_ROW_BLOCK,
                   config: RowsConfig | LoopConfig | None = None) -> torch.Tensor:
    """layer_norm (rms=False) or rms_norm (rms=True) over the trailing `normalized_shape` dims;
    `config` forces a launch (benchmarks, tests): a RowsConfig the whole-row kernel (rows that
    fit its tile), a LoopConfig the looped one."""
    shape = tuple(int(s) for s in ([normalized_shape] if isinstance(normalized_shape, int)
                                    else normalized_shape))
    k = len(shape)
    if k == 0 or k > x.dim() or tuple(x.shape[x.dim() - k:]) != shape:
        raise ValueError(f"{name}: normalized_shape {list(shape)} is not the trailing dims of "
                         f"an input of shape {list(x.shape)}")
    if x.dtype not in (torch.float32, torch.float16, torch.bfloat16):
        raise NotImplementedError(f"{name}: float32/float16/bfloat16 only, got {x.dtype}")
    for label, p in (("weight", weight), ("bias", bias)):
        if p is not None and tuple(p.shape) != shape:
            raise ValueError(f"{name}: {label} of shape {list(p.shape)}, expected {list(shape)}")
        if p is not None and (p.dtype != x.dtype or p.device != x.device):
            raise NotImplementedError(f"{name}: {label} must match the input's dtype and device")
    n = 1
    for size in shape:
        n *= size
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    if x.numel() == 0:
        return out
    view = rows_view(x, n)
    if view is None:
        view = x.contiguous().view(-1, n)
    m = view.shape[0]
    w = weight.contiguous() if weight is not None else view
    b = bias.contiguous() if bias is not None else view
    flags = {"RMS": rms, "HAS_W": weight is not None, "HAS_B": bias is not None}
    align = alignment(n, view.stride(0))
    launch = config or norm_launch(m, n, min(16, align * x.element_size()), max_row_block)
    kernel: Any
    if isinstance(launch, RowsConfig):
        kernel = _norm_rows_kernel
        kernel[(cdiv(m, launch.rows),)](view, w, b, out, m, n, view.stride(0), eps, **flags,
                                        BLOCK_N=row_block(n), ROWS=launch.rows, ALIGN=align,
                                        num_warps=launch.warps)
    elif (config is None
          and (not rms or n * x.element_size() > RMS_SPLIT_BYTES * max_row_block // MAX_ROW_BLOCK)
          and (chunk := split_chunks(m, n, min(SPLIT_BLOCK, max_row_block))) < n):
        # fewer rows than the GPU has room for: chunks of each row go to separate programs
        norm_split_rows(view, w, b, out, eps, flags, align, chunk, min(SPLIT_BLOCK, max_row_block))
    else:
        kernel = _norm_long_kernel
        kernel[(m,)](view, w, b, out, n, view.stride(0), eps, **flags, BLOCK_N=launch.tile,
                     ALIGN=align, num_warps=launch.warps)
    return out
