"""One-dim sum reduction shared by `sum` and `mean`: the input seen as (outer, R, inner)."""
# Triton kernels take DSL-typed arguments that Python annotations cannot express.
# mypy: disable-error-code="untyped-decorator,no-untyped-def"

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
import triton
import triton.language as tl

from flagbot.kernels.ops._host import cdiv, fewer_rows, next_power_of_2
from flagbot.kernels.ops._layout import as_contiguous_permutation
from flagbot.kernels.ops._rows import alignment
from flagbot.kernels.ops._sum_window import sum_window_rows, takes_sum_window
from flagbot.kernels.spec import Case, Inputs, OpSpec, numel, randn

# Enough programs to fill any current GPU several times over; fewer, and R is split across
# programs that write fp32 partial sums, summed by a second launch.
TARGET_PROGRAMS = 1024
TILE = 4096  # the longest stretch of a contiguous reduced dim one program loads at a time
# Column tiles (the reduced dim not the contiguous one), from one H100 sweep of 45 shapes x up
# to 84 tiles (2026-11-26, launch-inclusive, benchmarks/bench_row_tiles.py), then three
# 200-shape random sweeps (x torch, before -> after): as many programs as fill the device
# several times (8191x1023 bf16 mean over dim 0: 32 columns by 16 rows, 1.30x in the tile
# sweep); wide tiles for a few rows over many columns (5x16384x513 fp16 over dim 0: 128
# columns 0.16x -> 1024 columns 1.19x; 13x4194304 bf16 0.32x -> 1.09x), 128 columns at least
# for 3-8 rows (2x100000 fp32: 32 columns 0.72x, 128 1.12x; 1-2 rows: FEW_ROWS_TILE, below).
# Columns of 16 or fewer keep the earlier deep tiles (9581360x2 bf16 over dim 0: 32 columns
# 0.20x, 2 x 2048 1.16x).
COLS_TILE, COLS_PROGRAMS, COLS_WARPS = 512, 2048, 8
SHORT_ROWS_TILE, SHORT_ROWS_PROGRAMS = 512, 132  # see rows_tile
# Columns of 3-16 (a [100003, 3] tensor over dim 0): 256 rows of them at a time, 16 warps, and
# the reduced dim split over programs as usual (second tile run, H100, 2026-11-26, x torch,
# 4096 elements at 4 warps -> this: 100003x3 bf16 0.84x -> 1.33x, 868x11 bf16 0.88x -> 1.10x,
# 495001x3 fp32 0.92x -> 1.12x, 16777216x3 bf16 0.91x -> 1.03x; 2 columns had no shape there).
# With thousands of outer slices the deep tile stays: their programs already fill the device
# (the sweeps after: 10611x255x3 bf16 mean over dim 1 2.66x -> 1.30x, 12408x226x10 fp16 0.99x
# -> 0.68x with the shallow tile; up to 291 slices gained or held).
NARROW_COLS_DEPTH, NARROW_COLS_WARPS = 256, 16
# Rows of 1-4 elements (a sum over a dim of 1 or 2): 4096-element tiles, halved down to 64
# elements until there are TINY_ROWS_PROGRAMS programs, 2 warps from 256 elements down (4096x1
# fp32 over dim 1: one program 0.87x, 64 programs of 64 rows 1.31x; 2048x2 bf16 mean 0.93x ->
# 1.23x, same run). 64-element tiles everywhere cost millions of rows: 5544x1177x3 fp16 over
# dim 2 fell to 0.35x in the sweeps after.
TINY_ROWS_TILE, TINY_ROWS_PROGRAMS, TINY_ROWS_WARPS = 64, 528, 2
# A reduced dim this short with inner > 1 (a [16384, 3, 256] tensor over dim 1): one program
# per block of outputs, each walking its few rows, instead of column tiles that are mostly
# masked rows (0.33x torch on an H100, 2026-11-26, for that shape in bf16). With one outer
# slice (the partial sums of a split reduction) column tiles stay faster: all r rows of a
# tile are loaded at once (4099x5003 bf16 over dim 0: 44 us through this kernel, 32 without).
SHORT_R, SHORT_BLOCK = 32, 1024
# Its programs walk their rows one load after another, so it is the number of warps in flight
# that hides the memory latency: blocks small enough for ~16 programs a multiprocessor (the
# record, H100, 2026-11-27: every such row at 128 outputs a program read 1.00-1.23x torch;
# 51x32x3466 bf16 over dim 1 at 1024 outputs in 173 programs 0.50x, 41x8x2412 at 512 in 194
# 0.86x, 2048x9x240 fp32 at 1024 in 480 0.86x)
SHORT_PROGRAMS = 2112
# A column reduction of this many elements or fewer is one launch, never split: every record
# row (H100, 2026-11-27) that split one took 7.5-9.7 us launch-inclusive whatever its size,
# those in one launch 4.5-6 us, so the second launch costs ~3 us that a few rows of a
# program's tile do not (2081x7 bf16 mean over dim 0: 2 launches, 0.79x torch; 502x31 bf16
# 0.92x; 256x2x13 fp32 sum 0.81x). Its tile goes up to ONE_LAUNCH_TILE elements deep, so
# that the one program takes few steps.
ONE_LAUNCH_ELEMENTS, ONE_LAUNCH_TILE = 16384, 8192
# One launch over one or two fp32 columns with a tile 2048 rows deep (1025-2048 rows): 16 warps.
# On 4 such a tile read 2048x2 fp32 over dim 0 at 0.61-0.77x torch where 16 read 1.43-1.54x
# (H200 tile run, 2026-11-28, launch-inclusive us, the 2048x2 tile at 4 / 8 / 16 warps: 9.68 /
# 6.13 / 4.93, torch 7.06), while the 4096-deep tiles of 2049x2 and 3974x2 fp32 read 1.23x and
# 1.42x on 4, and 16-bit 2048x2 1.23-1.33x: those keep 4. Shallower tiles over 1-2 columns are
# the partial sums of split reductions, which no run has timed with more warps.
NARROW_DEEP_TILE = 2048, 16
# A reduced dim of one row, or two over at least FEW_ROWS_MIN_INNER columns that would take a
# column tile under 512 wide (1-2 rows of 128 columns on 8 warps: one element a thread):
# FEW_ROWS_TILE elements on FEW_ROWS_WARPS (H200 A/B, 2026-11-28, device time, 2x128/w8 ->
# these: 1x262144 fp16 mean over dim 0 1.58x, 1x262143 fp32 1.45x, 224x1x863 fp16 mean over
# dim 1 1.41x, 1x131071 bf16 1.21x, 2x56x8161 fp32 sum 1.43x, 2x378894 fp32 mean 1.32x,
# 2x131071 and 2x100000 fp32 1.08-1.09x; the 16 other rows of one row 0.98-1.15x, and 1x1024
# on 8 warps -> 4 in 3 rows 0.99-1.10x). Two rows over fewer columns came out even (2x6496
# bf16 0.94x, 2x14653 fp32 1.07x), as did the two-row partial sums of split reductions over
# 16384 columns (0.92-1.09x); two rows already on 1024 columns lost (2x33554432 bf16 0.19x at
# 2x512).
FEW_ROWS_TILE, FEW_ROWS_WARPS, FEW_ROWS_MIN_INNER = 1024, 4, 65536


@triton.jit
def _sum_rows_kernel(x_ptr, out_ptr, m, r, stride_row, chunk, scale, BLOCK_R: tl.constexpr,
                     ROWS: tl.constexpr, ALIGN: tl.constexpr):
    r = (r // ALIGN) * ALIGN  # exact: tells the compiler it divides
    stride_row = (stride_row // ALIGN) * ALIGN  # exact: tells the compiler it divides
    chunk = (chunk // ALIGN) * ALIGN  # exact: tells the compiler it divides
    # inner == 1: ROWS rows per program, columns [split * chunk, (split + 1) * chunk) of each.
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS).to(tl.int64)
    split = tl.program_id(1)
    lo = split * chunk
    hi = tl.minimum(lo + chunk, r)
    acc = tl.zeros([ROWS, BLOCK_R], tl.float32)
    for start in range(lo, hi, BLOCK_R):
        cols = start + tl.arange(0, BLOCK_R)
        mask = (rows[:, None] < m) & (cols[None, :] < hi)
        acc += tl.load(x_ptr + rows[:, None] * stride_row + cols[None, :], mask=mask,
                       other=0.0).to(tl.float32)
    total = tl.sum(acc, axis=1) * scale
    tl.store(out_ptr + split.to(tl.int64) * m + rows, total.to(out_ptr.dtype.element_ty),
             mask=rows < m)


@triton.jit
def _sum_cols_kernel(x_ptr, out_ptr, r, inner, chunk, tiles_i, outer_total, scale, s_outer,
                     s_r, BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr, ALIGN: tl.constexpr,
                     ALIGN_I: tl.constexpr):
    s_outer = (s_outer // ALIGN) * ALIGN  # exact: tells the compiler it divides
    s_r = (s_r // ALIGN) * ALIGN  # exact: tells the compiler it divides
    # The columns' bound (and the partial sums' row length, a multiple of it) too: unseen, the
    # mask splits every load into 2-byte elements (compiled for sm_90, 16x32 bf16 tiles over
    # 5782 columns: 2-byte loads; stated, 4-byte ones, the most two elements a thread allow).
    inner = (inner // ALIGN_I) * ALIGN_I
    outer_total = (outer_total // ALIGN_I) * ALIGN_I
    # inner > 1: BLOCK_I neighbouring columns of one outer slice, rows [lo, hi) of R; every
    # load is a contiguous row segment, rows `s_r` apart and slices `s_outer` apart (a sliced
    # input is read in place).
    pid = tl.program_id(0)
    outer = (pid // tiles_i).to(tl.int64)
    cols = (pid % tiles_i) * BLOCK_I + tl.arange(0, BLOCK_I)
    col_mask = cols < inner
    split = tl.program_id(1)
    lo = split * chunk
    hi = tl.minimum(lo + chunk, r)
    base = outer * s_outer
    acc = tl.zeros([BLOCK_R, BLOCK_I], tl.float32)
    for start in range(lo, hi, BLOCK_R):
        rr = start + tl.arange(0, BLOCK_R)
        mask = (rr[:, None] < hi) & col_mask[None, :]
        acc += tl.load(x_ptr + base + rr[:, None].to(tl.int64) * s_r + cols[None, :],
                       mask=mask, other=0.0).to(tl.float32)
    total = tl.sum(acc, axis=0) * scale
    dst = out_ptr + split.to(tl.int64) * outer_total + outer * inner + cols
    tl.store(dst, total.to(out_ptr.dtype.element_ty), mask=col_mask)


@triton.jit
def _sum_short_kernel(x_ptr, out_ptr, r, inner, total, scale, s_outer, s_r,
                      BLOCK: tl.constexpr):
    # Output element idx is (outer o, column i); its inputs sit `s_r` apart. Neighbouring
    # outputs are neighbouring addresses, so each of the r loads per output is coalesced.
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < total
    o = idx // inner
    src = x_ptr + o * s_outer + (idx - o * inner)
    acc = tl.zeros([BLOCK], tl.float32)
    for j in range(0, r):
        acc += tl.load(src + j * s_r, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + idx, (acc * scale).to(out_ptr.dtype.element_ty), mask=mask)


@dataclass(frozen=True)
class ReduceConfig:
    """The tile of a reduction's main launch (benchmarks, tests): `block_r` of the reduced dim
    at a time by `block_o` outputs (rows where the reduced dim is contiguous, else
    neighbouring columns), `warps` per program."""

    block_r: int
    block_o: int
    warps: int


def rows_tile(outer: int, block_r: int) -> tuple[int, int]:
    """(rows, warps) a program takes where the reduced dim is the contiguous one, `block_r` (a
    power of two) of it at a time. Rows of 64-256: SHORT_ROWS_TILE elements and enough programs
    (H100 random sweeps, 2026-11-26, x torch: 1024x71 fp32 sum 0.53x with 32 rows a program,
    1.16x with 4; 16384x8x127 bf16 mean 0.64x -> 1.60x); shorter and longer rows lost with
    small tiles (1024x5x17 bf16 1.10x -> 0.80x, 498x266x268 fp16 1.14x -> 0.65x): 4096
    elements, as before; rows of 1-4 elements: smaller tiles, down to TINY_ROWS_TILE, while
    there are few programs."""
    if 64 <= block_r <= 256:
        rows = fewer_rows(SHORT_ROWS_TILE // block_r, outer, SHORT_ROWS_PROGRAMS)
        return rows, max(1, block_r * rows // 256)
    rows = max(1, TILE // block_r)
    if block_r <= 4:
        rows = fewer_rows(rows, outer, TINY_ROWS_PROGRAMS, TINY_ROWS_TILE // block_r)
    tile = block_r * rows
    return rows, TINY_ROWS_WARPS if tile <= 256 else 4 if tile <= 2048 else 8


def cols_tile(outer: int, r: int, inner: int) -> tuple[int, int, int]:
    """(columns, rows of the reduced dim, warps) a program takes where the reduced dim is not
    the contiguous one: the widest column tile that still gives COLS_PROGRAMS programs, but
    never narrower than ~1024 elements of a short reduced dim need (32 columns at least),
    COLS_TILE elements deep and 256 at least; 3-16 columns all of them, NARROW_COLS_DEPTH deep
    (fewer than COLS_PROGRAMS outer slices) or 4096 elements deep, as are 1-2 columns; a
    reduced dim of 1-2 rows over many columns FEW_ROWS_TILE elements."""
    if inner <= 16:
        block_i = next_power_of_2(inner)
        if block_i >= 4 and outer < COLS_PROGRAMS:
            return block_i, min(next_power_of_2(r), NARROW_COLS_DEPTH), NARROW_COLS_WARPS
        return block_i, min(next_power_of_2(r), TILE // block_i), 4
    if r == 1:
        return min(FEW_ROWS_TILE, next_power_of_2(inner)), 1, FEW_ROWS_WARPS
    narrowest = max(32, min(128, 1024 // next_power_of_2(r)))
    block_i = narrowest
    for width in (1024, 512, 256, 128, 64, 32):
        if width < narrowest:
            break
        if width <= 2 * next_power_of_2(inner) and outer * cdiv(inner, width) >= COLS_PROGRAMS:
            block_i = width
            break
    if r == 2 and inner >= FEW_ROWS_MIN_INNER and block_i < FEW_ROWS_TILE // 2:
        return FEW_ROWS_TILE // 2, 2, FEW_ROWS_WARPS
    block_r = max(1, min(next_power_of_2(r), COLS_TILE // block_i))
    while block_r * block_i < 256:
        block_r *= 2
    return block_i, block_r, COLS_WARPS


def short_block(total: int) -> int:
    """Outputs a program of the short-dim kernel takes: 128 up to SHORT_BLOCK, for about
    SHORT_PROGRAMS programs."""
    return max(128, min(SHORT_BLOCK, next_power_of_2(total // SHORT_PROGRAMS + 1)))


def lines(x: torch.Tensor, d: int) -> tuple[int, int, int] | None:
    """(outer, s_outer, inner): `x`'s dims other than `d` seen as [outer, inner] with inner
    contiguous (stride 1) and outer slices `s_outer` apart, so that a reduction over `d` reads
    `x` in place (a slice of wider rows too); None where they do not merge so, or where the
    kept dims are not contiguous at the end (the reduced dim is the contiguous one)."""
    merged: list[list[int]] = []
    for i in range(x.dim()):
        if i == d or x.shape[i] == 1:
            continue
        size, stride = x.shape[i], x.stride(i)
        if merged and merged[-1][1] == stride * size:
            merged[-1] = [merged[-1][0] * size, stride]
        else:
            merged.append([size, stride])
    if not merged or len(merged) > 2 or merged[-1][1] != 1:
        return None
    outer, s_outer = merged[0] if len(merged) == 2 else (1, 0)
    return outer, s_outer, merged[-1][0]


def normalize_dim(x: torch.Tensor, dim: int | Sequence[int]) -> int:
    """The one non-negative dim of an aten `dim` argument (int or one-element list)."""
    dims = [dim] if isinstance(dim, int) else list(dim)
    if len(dims) != 1:
        raise NotImplementedError(f"reduction over exactly one dim is supported, got {dim}")
    if not isinstance(dims[0], int) or not -max(x.dim(), 1) <= dims[0] < max(x.dim(), 1):
        raise IndexError(f"dim {dims[0]!r} out of range for a {x.dim()}-dim tensor")
    return dims[0] % max(x.dim(), 1)


def _splits(programs: int, r: int, block_r: int, forced: int | None) -> int:
    if forced is not None:
        return max(1, min(forced, int(cdiv(r, block_r))))
    if programs >= TARGET_PROGRAMS:
        return 1
    # Each split keeps at least 4 tiles of R, so partial sums stay a small fraction of the input.
    return max(1, min(int(cdiv(TARGET_PROGRAMS, programs)), r // (4 * block_r)))


def _reduce_3d(src: torch.Tensor, outer: int, r: int, inner: int, out: torch.Tensor,
               scale: float, splits: int | None, *, s_outer: int | None = None,
               s_r: int | None = None, config: ReduceConfig | None = None) -> None:
    """Sum (times `scale`) of `src` seen as [outer, r, inner] into `out` (outer*inner), the
    reduced dim `s_r` elements apart and outer slices `s_outer` apart (default: contiguous);
    inner elements are contiguous, and so is the reduced dim where inner == 1."""
    s_r = inner if s_r is None else s_r
    s_outer = r * inner if s_outer is None else s_outer
    kernel: Any
    if inner == 1:
        block_r = min(next_power_of_2(r), TILE)
        rows, warps = rows_tile(outer, block_r)
        if config is not None:
            block_r, rows, warps = config.block_r, config.block_o, config.warps
        grid_rows = cdiv(outer, rows)
        n_split = _splits(grid_rows, r, block_r, splits)
        chunk = cdiv(cdiv(r, n_split), block_r) * block_r
        n_split = cdiv(r, chunk)
        dst = out if n_split == 1 else torch.empty((n_split, outer), dtype=torch.float32,
                                                   device=src.device)
        part_scale = scale if n_split == 1 else 1.0  # split: the second pass scales
        if rows == 1 and config is None and takes_sum_window(src, r, s_outer):
            # very long 16-bit rows whose starts are off 16 bytes: read through aligned windows
            sum_window_rows(src, dst, outer, r, s_outer, chunk, part_scale, block_r, n_split,
                            warps)
        else:
            kernel = _sum_rows_kernel
            kernel[(grid_rows, n_split)](src, dst, outer, r, s_outer, chunk, part_scale,
                                         BLOCK_R=block_r, ROWS=rows,
                                         ALIGN=alignment(r, s_outer), num_warps=warps)
        total = outer
    elif r <= SHORT_R and outer > 1 and splits is None and config is None:
        total = outer * inner
        block = short_block(total)
        kernel = _sum_short_kernel
        kernel[(cdiv(total, block),)](src, out, r, inner, total, scale, s_outer, s_r,
                                      BLOCK=block, num_warps=4)
        return
    else:
        block_i, block_r, warps = cols_tile(outer, r, inner)
        small = splits is None and config is None and outer * r * inner <= ONE_LAUNCH_ELEMENTS
        if small:
            block_r = max(block_r, min(next_power_of_2(r), ONE_LAUNCH_TILE // block_i))
            if block_i <= 2 and block_r == NARROW_DEEP_TILE[0] and src.dtype == torch.float32:
                warps = NARROW_DEEP_TILE[1]
        if config is not None:
            block_r, block_i, warps = config.block_r, config.block_o, config.warps
        tiles_i = cdiv(inner, block_i)
        n_split = 1 if small else _splits(outer * tiles_i, r, block_r, splits)
        chunk = cdiv(cdiv(r, n_split), block_r) * block_r
        n_split = cdiv(r, chunk)
        total = outer * inner
        dst = out if n_split == 1 else torch.empty((n_split, total), dtype=torch.float32,
                                                   device=src.device)
        kernel = _sum_cols_kernel
        kernel[(outer * tiles_i, n_split)](src, dst, r, inner, chunk, tiles_i, total,
                                           scale if n_split == 1 else 1.0, s_outer, s_r,
                                           BLOCK_R=block_r, BLOCK_I=block_i,
                                           ALIGN=alignment(s_r, s_outer),
                                           ALIGN_I=alignment(inner), num_warps=warps)
    if n_split > 1:
        _reduce_3d(dst, 1, n_split, total, out, scale, None)


def sum_partials(partials: torch.Tensor, splits: int, total: int, out: torch.Tensor) -> None:
    """out (total elements, any float dtype) = the sum over dim 0 of contiguous fp32 partials.
    mm's K splits sum theirs with the tile their speed was measured with (128 columns, 4
    warps), not the reductions' later rules, which no mm sweep has timed yet."""
    block_i = min(next_power_of_2(total), 128)
    tile = ReduceConfig(min(next_power_of_2(splits), max(1, TILE // block_i)), block_i, 4)
    _reduce_3d(partials, 1, splits, total, out, 1.0, None, config=tile)


def reduce_dim(x: torch.Tensor, dim: int | Sequence[int], keepdim: bool, mean: bool,
               dtype: torch.dtype | None, *, splits: int | None = None,
               config: ReduceConfig | None = None) -> torch.Tensor:
    """Sum (or mean) of `x` over one dim, accumulated in fp32; any layout (a transposed or
    sliced input is read in place). `splits` forces how many programs share one reduced line,
    `config` the main launch's tile (tests, benchmarks)."""
    d = normalize_dim(x, dim)
    if dtype is not None:
        x = x.to(dtype)
    if x.dtype not in (torch.float32, torch.float16, torch.bfloat16):
        raise NotImplementedError(f"float32/float16/bfloat16 only, got {x.dtype}")
    if x.dim() == 0:
        x = x.reshape(1)
        squeeze_all = True
    else:
        squeeze_all = False
    shape = list(x.shape)
    r = shape[d]
    out_shape = shape[:d] + ([1] if keepdim else []) + shape[d + 1:]
    if d == x.dim() - 1 and x.dim() >= 2 and x.stride(-1) == 1 and not x.is_contiguous():
        # rows that are a slice of wider rows: read in place, rows `stride` apart, instead of
        # copying first (29x1171436 fp32 sliced, H100: 0.45x torch with the copy, 1.21x without)
        try:
            rows = x.view(-1, r)
        except RuntimeError:  # leading dims that do not merge: copy below
            rows = None
        if rows is not None and rows.numel():
            flat = torch.empty(rows.shape[0], dtype=x.dtype, device=x.device)
            _reduce_3d(rows, rows.shape[0], r, 1, flat, 1.0 / r if mean else 1.0, splits,
                       s_outer=rows.stride(0), config=config)
            return flat.view(out_shape)
    if (found := lines(x, d)) is not None and r and found[2] > 1:
        # the kept dims in their own order already: read in place, no copy (512x127x1024 bf16
        # sliced, mean over dim 1: 0.27x torch through a contiguous copy)
        outer, s_outer, inner = found
        flat = torch.empty(outer * inner, dtype=x.dtype, device=x.device)
        _reduce_3d(x, outer, r, inner, flat, 1.0 / r if mean else 1.0, splits,
                   s_outer=s_outer, s_r=x.stride(d), config=config)
        return flat.view(out_shape)
    src, order = as_contiguous_permutation(x)
    d_src = order.index(d)
    kept = [dim_ for dim_ in order if dim_ != d]  # original dims in the order src keeps them
    outer, inner = numel(tuple(src.shape[:d_src])), numel(tuple(src.shape[d_src + 1:]))
    flat = torch.empty(outer * inner, dtype=x.dtype, device=x.device)
    if flat.numel():
        if r == 0:
            flat.fill_(float("nan") if mean else 0.0)
        else:
            _reduce_3d(src, outer, r, inner, flat, 1.0 / r if mean else 1.0, splits,
                       config=config)
    # flat holds the kept dims in src's order; put them back in the original order.
    result = flat.view([shape[k] for k in kept]).permute(
        [kept.index(k) for k in range(len(shape)) if k != d])
    result = result.reshape(out_shape) if out_shape else result.reshape(())
    return result.reshape(()) if squeeze_all else result


def make_inputs(case: Case, dtype: torch.dtype, device: torch.device,
                gen: torch.Generator) -> Inputs:
    """x of the case's shape; the case's `dim` as the second positional argument."""
    return (randn(case.shape, dtype, device, gen), [case.params["dim"]]), {}


def reduced_size(case: Case) -> int:
    """Length of the reduced dim (FlagGems scales atol by it)."""
    return case.shape[int(case.params["dim"])]


def bytes_moved(case: Case, dtype: torch.dtype) -> int:
    """Input read once plus the output written once."""
    n = numel(case.shape)
    return (n + n // reduced_size(case)) * dtype.itemsize


CI_CASES = (Case((4, 33), {"dim": -1}), Case((5, 6, 7), {"dim": 1}), Case((17, 8), {"dim": 0}))
FULL_CASES = (Case((4096, 4096), {"dim": -1}), Case((4096, 4096), {"dim": 0}),
              Case((64, 4096, 64), {"dim": 1}), Case((8192, 8192), {"dim": 0}),
              Case((65536, 128), {"dim": -1}), Case((8, 12_500_003), {"dim": -1}),
              Case((4099, 5003), {"dim": 0}))


def reduction_spec(name: str, aten: tuple[str, ...], generic: Any, reference: Any) -> OpSpec:
    """The spec shared by the one-dim reductions (sum, mean): same cases, bytes and FLOPs."""
    return OpSpec(
        name=name,
        aten=aten,
        generic=generic,
        reference=reference,
        make_inputs=make_inputs,
        ci_cases=CI_CASES,
        full_cases=FULL_CASES,
        bytes_moved=bytes_moved,
        flops=lambda case: numel(case.shape),
        reduce_size=reduced_size,
    )
