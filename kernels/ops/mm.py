"""mm: C = A @ B with fp32 accumulation; tiles picked by shape, K split for skinny products."""
# Triton kernels take DSL-typed arguments that Python annotations cannot express.
# mypy: disable-error-code="untyped-decorator,no-untyped-def"

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import torch
import triton
import triton.language as tl

from flagbot.kernels.ops import _mm_counters, _mm_memo, _mm_tma, _resident
from flagbot.kernels.ops._host import cdiv, next_power_of_2
from flagbot.kernels.ops._mm_common import grouped_tile, on_16_bytes, step
from flagbot.kernels.ops._reduce import sum_partials
from flagbot.kernels.ops._rows import alignment
from flagbot.kernels.spec import NO_BF16, Case, Inputs, OpSpec, randn

# Tile configurations are picked by shape, not autotuned: the generic library must run the same
# way on every vendor's Triton and on the CPU interpreter, and vendors tune their own
# (backends/_nvidia/tune_configs.yaml). Shared memory stays under 150 KiB (128x256x64 tiles,
# three stages, 16-bit), which fits A100-class and newer GPUs. Few output tiles (skinny or
# GEMV-like products) split K across programs that write fp32 partial products, summed by the
# kernel's own programs or a second launch (sums_in_kernel).
TARGET_PROGRAMS = 264  # two per multiprocessor on a 132-SM part
ONE_WAVE = 132  # fewer output tiles than this leave multiprocessors idle: split K
TWO_WAVES = 256  # this many 128x128 output tiles or more: 128-row tiles
LONG_K = 2048  # two waves of tiles and K this long: 128x256 tiles
COLUMNS_LONG_K = 8192  # fp32 A by columns over a wave of tiles: 128x128 tiles from this K
WIDE_GRID = 1000  # ... as for this many 128x128 tiles (~4 waves) whatever K
FEW_TILES = 64  # grids of fewer tiles than this split K further
FP32_NARROW_MAX_TILES = 160  # fp32 row-major, K under LONG_K: 32x64 tiles unsplit up to here
FP32_SPLIT_K = 8192  # fp32 row-major, K this long and whole tiles: 128x64 tiles, split ...
FP32_SPLIT_TILES = 128  # ... over this many such tiles up to TARGET_PROGRAMS, ...
FP32_SPLIT_PROGRAMS = 768  # ... towards this many programs (about six per multiprocessor),
FP32_SPLIT_MIN_K = 1024  # ... each part at least this long
SPLIT_MIN_K = 1024  # m > 64, 16-bit: only a K this long splits (1288x257x637 bf16: split 4
#                     0.78x torch, unsplit 1.01x)
NARROW_MIN_SPLIT_K = 4096  # ... and under this, 64x64 tiles that fill the grid go unsplit
WIDE_TILE_MIN_N = 1024  # 128x256 tiles at half a wave from this many columns (less wastes them)
SHORT_K_WIDE_N = 8192  # ... and from this many where K is 33-64
VERY_LONG_K = 16384  # 16-bit, under two waves: 128x256 tiles split towards a wave from here ...
WIDE_SPLIT_MIN_TILES = 12  # ... where the grid has this many such tiles or more
# K within one tile and small operands: no padded copies, which cost more than the product
# there (2048x929x30 fp16: 0.11x torch with them, 1.04x without); large operands are still
# copied (512x16384x53 fp32 transposed: 0.98x with the copy, 0.63x without).
SHORT_K, SMALL_OPERANDS = 64, 1 << 19
SMALL_PRODUCT_K = 192  # 16-bit, more than 64 rows: K of 33 to three tiles, small operands
COPY_READS = 4  # an unaligned fp32 row-major operand read fewer times than this stays in place
LARGE_BY_COLUMNS = 1 << 23  # ... as does a 16-bit one stored by columns of this many elements
SKINNY_ODD_B_ROWS16 = 32, 4096  # 16-bit B, odd rows, in place: 16-row tiles to rows, K
SKINNY_PART_K = 1024  # 16-bit, up to 64 rows: a K split four programs an SM keeps this much a part
SUM_HERE_MIN_TILES = 32  # fp32 split this many tiles wide: parts summed in the kernel ...
SUM_HERE_MAX_PARTS = 20480  # ... where a tile's parts hold at most this many elements
ONE_STEP_MIN_TILES = TWO_WAVES  # fp32 one-step products: resident programs past this
PERSISTENT_MIN_TILES = ONE_WAVE  # 16-bit descriptor tiles unsplit: resident programs past this
PERSISTENT_MAX_K = 4096  # ... and K up to this (longer: 0.93-1.01x, the pipeline full anyway)
IN_PLACE_STAGED = 48  # 2-byte elements a thread may stage a K step (48: 255 registers, no spill)


@dataclass(frozen=True)
class MMConfig:
    """One tile configuration; split_k > 1 sums fp32 partial products in a second launch;
    pad_k: where K does not divide into tiles, both operands are copied with K zero-padded to
    whole tiles, so that the kernel is compiled without a masked last K tile (see _no_tail);
    copy_unaligned: operands whose rows do not start on 16 bytes are copied to padded rows
    first (_aligned); False reads them in place with narrower loads; a_rows: an A stored column
    by column is copied row by row first (_row_copy; for fp32 where the row-major tiles then
    take resident programs, see _pick); tma: 16-bit operands that a tensor descriptor can
    address (after any copy) are loaded through one where the target has them (_mm_tma), else
    as without it;
    persistent: a product with K unsplit runs as resident programs that each take output
    tiles one after another: through descriptors where tma (_mm_tma.mm_tma_persistent), else
    the pointer kernel's, only where K is within one K tile (_mm_persistent_kernel)."""

    block_m: int
    block_n: int
    block_k: int
    warps: int
    stages: int
    group_m: int = 8
    split_k: int = 1
    pad_k: bool = False
    copy_unaligned: bool = True
    a_rows: bool = False
    tma: bool = False
    persistent: bool = False


def _split(cfg: MMConfig, m: int, n: int, k: int, programs: int, max_split: int,
           min_k_per_split: int, power_of_two: bool = False) -> MMConfig:
    """`cfg` with K split into up to `max_split` parts, enough for about `programs` programs,
    each part at least `min_k_per_split` long (`power_of_two`: the largest power of two up to
    that many parts); unchanged where that leaves one part."""
    tiles = cdiv(m, cfg.block_m) * cdiv(n, cfg.block_n)
    split = min(cdiv(programs, tiles), k // min_k_per_split, max_split)
    if power_of_two and split > 1:
        split = 1 << (split.bit_length() - 1)
    return replace(cfg, split_k=split) if split > 1 else cfg


def mm_config(m: int, n: int, k: int, dtype: torch.dtype, *,
              a_columns: bool = False, unaligned: bool = True,
              b_odd_rows: bool = False, a_aligned: bool = False) -> MMConfig:
    """The tile configuration for an (m, k) @ (k, n) product in `dtype`; `a_columns`: A is
    stored column by column (a transposed operand read in place); `unaligned`: an operand's
    rows (or columns) are off 16 bytes apart; `b_odd_rows`: B is 16-bit with rows (or columns)
    an odd number of elements apart (_odd_rows), which skinny products read in place;
    `a_aligned`: A's rows (or columns) start on 16 bytes.

    From one H100 sweep of 80 shapes x up to 80 configurations (2026-11-26, device time,
    benchmarks/bench_mm_tiles.py; x torch in brackets): fp32 (3xTF32) row-major, 32x128 tiles
    beat 128x64 almost everywhere (307x2048x6680 split 4 1.04 vs 0.48, 6795x362x700 1.12 vs
    0.66, 4096^3 1.04 vs 1.05); 16-bit with two waves of tiles and a long K, 128x256 tiles
    (3557x2048x2344 0.79 vs 128x128 0.52; 1961x4096x7856 0.91 vs 0.64); K under one tile,
    the tile's K cut to fit (8192x2047x13 bf16 1.25 vs 0.29 with a 64-wide K tile); splitting
    a grid of a wave or more costs more than it gains (4x32768x432 fp16 split 2 0.84, none
    1.07), and fp32's 3-pass products gain from K splits up to about 4 programs per
    multiprocessor (307x2048x6680 split 2 0.92, split 4 1.04). Then checked on the three
    200-shape random sweeps of the same day, which kept fp32 A read down its columns and fp32
    products of up to 16 rows on their earlier tiles (7x27146x2047 fp32: 16x128 0.95x torch,
    16x64 0.46x).
    """
    wide = dtype.itemsize == 2
    # a K shorter than one tile: the smallest tile that holds it (K=30 wasted half of 64)
    bk = min(64 if wide else 32, max(16, next_power_of_2(k)))
    if not wide and m > 16 and not a_columns:
        tiles_128x64 = cdiv(m, 128) * cdiv(n, 64)
        if (k >= FP32_SPLIT_K and k % bk == 0
                and FP32_SPLIT_TILES <= tiles_128x64 < TARGET_PROGRAMS):
            # a long K over one to two waves of 128x64 tiles: those tiles split towards about
            # six programs a multiprocessor beat 32x128 ones (H200 A/B, 2026-11-27, device us,
            # 32x128 -> this: 1072x1024x15584 952 -> 864, 1361x848x16384 1027 -> 963; torch
            # 785, 802). Fewer tiles split further were a toss: 1024x344x16384 (48 tiles) 306
            # -> 264 and 127x5768x8192 (91) 316 -> 270, but 1025x512x16384 (72) 351 -> 463 and
            # 1023x613x8192 (80) 235 -> 274. A K tail masked in every step costs 128x64 tiles
            # twice the time (128x8069x4801 in a tile run: 417 padded, 820 masked): whole tiles.
            return _split(MMConfig(128, 64, bk, 4, 4), m, n, k, FP32_SPLIT_PROGRAMS, 32,
                          FP32_SPLIT_MIN_K, power_of_two=True)
        cfg = MMConfig(32, 128, bk, 4, 4)
        tiles = cdiv(m, cfg.block_m) * cdiv(n, cfg.block_n)
        if SHORT_K < k < LONG_K and FEW_TILES <= tiles <= FP32_NARROW_MAX_TILES:
            # K under LONG_K over 64-160 such tiles: 32x64 tiles unsplit, twice the programs
            # without partial sums (H200 A/B of 2026-11-27, device us, 32x128 -> 32x64:
            # 512x461x469 23.7 -> 20.9, 664x853x712 41.7 -> 39.8, 34x4649x256 17.8 -> 13.1;
            # all 9 such rows 1.06-1.32x faster; beyond 160 tiles 6 of 11 rows were slower,
            # 256x8192x1777 by 11%; under 64 tiles the split still won, 129x431x751 in a tile run)
            return MMConfig(32, 64, bk, 4, 4)
        if tiles >= TARGET_PROGRAMS:
            return cfg
        # a K under LONG_K splits only towards one wave of programs, in a power of two of
        # parts: finer parts of 70-180 lost to the split's partial sums (H200 A/B,
        # 2026-11-27, x torch launch-inclusive, earlier split -> this one: 512x461x469 7 parts
        # 0.59 -> 2 parts 0.71, 2048x191x700 5 -> 2 0.63 -> 0.80, 42x8193x883 5 -> 2 0.65 ->
        # 0.85, 512x1024x1023 5 -> 2 0.75 -> 0.92, 129x5256x971 0.95 -> 1.15; of 13 such rows
        # 9 faster by over 5%, 457x129x700 10 -> 4 parts 0.90 -> 0.85 the loss). A long K
        # keeps its finer split: rounded down to a power of two it lost (29x11657x2315 6 -> 4
        # parts 1.10 -> 0.96, 293x513x5347 11 -> 8 0.78 -> 0.73).
        if k >= LONG_K:
            return _split(cfg, m, n, k, 2 * TARGET_PROGRAMS, 32, 2 * bk)
        return _split(cfg, m, n, k, ONE_WAVE, 32, 2 * bk, power_of_two=True)
    if (not wide and m > 32 and unaligned and k > bk and k % bk
            and cdiv(m, 64) * cdiv(n, 64) >= FEW_TILES):
        # fp32 A read down its columns, an operand off 16 bytes, K ending off a tile, a grid
        # of 64x64 tiles or more: both operands copied K-padded, their columns padded to 16
        # elements, at 64x64 tiles, split in two under a wave (H200 A/B, 2026-11-27, x torch
        # launch-inclusive, earlier pick -> this one, both operands by columns: 63x21557x2131
        # 0.18 -> 0.58, 33x32768x511 0.29 -> 0.59, 3989x184x700 0.40 -> 0.76, 511x540x2049
        # 0.46 -> 0.69, 5323x513x7383 0.52 -> 1.28, 5456x3606x6171 1.17 -> 1.48). With both
        # operands' columns on 16 bytes the copy only cost (1184x4096x1048 1.54 -> 1.36);
        # fewer tiles lost in a tile run (128x457x1061: 16 tiles, 0.82 -> 0.56), as did K
        # within one tile (12296x79x23 0.53 -> 0.45).
        cfg = MMConfig(64, 64, bk, 4, 4, pad_k=True)
        if cdiv(m, 64) * cdiv(n, 64) >= ONE_WAVE:
            return cfg
        return _split(cfg, m, n, k, TARGET_PROGRAMS, 2, 2 * bk)
    if not wide and m > 64:
        # A read down its columns: 128x64 tiles (2161x1025x16384 fp32 t 0.72x torch, 32x128
        # 0.61x), K split under one wave (256x2049x2048: 66 tiles, 0.47x torch unsplit)
        cfg = MMConfig(128, 64, bk, 4, 4)
        tiles = cdiv(m, 128) * cdiv(n, 64)
        if k >= COLUMNS_LONG_K and tiles >= ONE_WAVE:
            # a long K over a wave of tiles or more: 128x128 tiles on 8 warps split towards
            # four programs a multiprocessor (H200 tile run, 2026-11-27, x torch: 2161x1025x16384
            # t 128x64 unsplit 0.75, 128x128/w8s3 in 4 parts 1.11, in 2 0.95; H200 A/B,
            # 2026-11-28, launch-inclusive 0.76 -> 1.11)
            return _split(MMConfig(128, 128, bk, 8, 3), m, n, k, 4 * ONE_WAVE, 4, 2 * bk)
        if tiles < FEW_TILES // 2 or (k <= bk and tiles < TWO_WAVES):
            # under 32 such tiles, or under two waves with K within one tile: 32x128 tiles split
            # towards two programs a multiprocessor (H200 A/B, 2026-11-28, x torch
            # launch-inclusive, 128x64 -> 32x128: 80x1024x8191 t 0.33 -> 0.59, 587x272x1025 t
            # 0.47 -> 0.62, 128x457x1061 t 0.77 -> 0.82; one K step, unsplit: 1025x64x3 t 1.36
            # -> 1.58, 12296x79x23 t 0.59 -> 0.67 at 194 tiles). A split grid of 48 tiles lost
            # (320x1023x1024 t 0.92 -> 0.85). Larger grids over one K step stay, for the
            # resident programs over A copied by rows (_pick).
            return _split(MMConfig(32, 128, bk, 4, 4), m, n, k, TARGET_PROGRAMS, 16, 2 * bk)
        if tiles >= ONE_WAVE:
            return cfg
        return _split(cfg, m, n, k, TARGET_PROGRAMS, 16 if tiles < FEW_TILES // 4 else 4,
                      2 * bk)
    if m <= 64:
        # a few rows against a long K: split K unless the grid fills a wave (4x449x16384 bf16:
        # 4 tiles, 0.25x torch with 8 parts; 64x8192x8192 fp16: 128 tiles, split 2 49.5 us,
        # split 5 64.0 on an H200). B is read once, in place even where its rows do not start
        # on 16 bytes: a padded copy moves it twice more (8x10703x5537 bf16: 0.59x torch with
        # the copy, 1.10x without; 47x4095x624 bf16 0.80x / 1.01x), and 64-wide column tiles
        # (more programs, each a narrower stretch of B's rows) beat 128-wide ones for 16-bit
        # and for fp32 read down A's columns (24x8389x607 fp32 t: 1.33x vs 0.90x, both in
        # place); fp32 row-major keeps 128 (7x27146x2047: 16x128 0.95x, 16x64 0.46x).
        wide_tiles = wide or a_columns
        # 16-bit B read in place with rows an odd number of elements apart (2-byte loads): 16-row
        # tiles to 32 rows and K 4096 (H200 A/B, 2026-11-28, x torch launch-inclusive, 32x64 ->
        # 16x64: 17x1631x255 bf16 0.87 -> 1.20, 32x257x168 fp16 0.74 -> 1.05, 25x1033x1277 fp16
        # 0.79 -> 0.98, 17x541x72 fp16 0.93 -> 1.00). Over a longer K B read twice costs more
        # (32x4095x8192 bf16 0.86 -> 0.68, 24x513x16384 bf16 0.77 -> 0.66; 18x4097x10938 fp16
        # gained, 0.56 -> 0.62). From 33 to 64 rows only with A's rows on 16 bytes and a grid
        # of 64-row tiles under a wave (the same A/B, 64x64 -> 16x64: 47x4095x624 bf16 0.89 ->
        # 1.06, 53x273x1024 fp16 0.80 -> 1.12, 64x6287x32 fp16 0.90 -> 1.18, 44x3271x512 fp16
        # 0.82 -> 0.94, 43x4095x128 bf16 1.32 -> 1.47). A read in place with odd rows split
        # (64x2789x419 bf16 0.91 -> 1.08, 55x2047x543 fp16 0.90 -> 0.72), and a grid a wave
        # wide lost (64x10831x457 bf16 t 1.81 -> 0.93, 43x20521x257 fp16 0.70 -> 0.60).
        rows16 = m <= 16 or (wide and b_odd_rows and k <= SKINNY_ODD_B_ROWS16[1] and (
            m <= SKINNY_ODD_B_ROWS16[0] or (a_aligned and not a_columns
                                            and cdiv(m, 64) * cdiv(n, 64) < ONE_WAVE)))
        cfg = MMConfig(16 if rows16 else 32 if m <= 32 else 64, 64 if wide_tiles else 128,
                       bk, 4, 4, copy_unaligned=False)
        tiles = cdiv(m, cfg.block_m) * cdiv(n, cfg.block_n)
        # fp32's three passes still gain from a split at a wave of tiles (7x27146x2047: 213
        # tiles, split 2 0.95x torch, unsplit 0.47x); 16-bit ones do not (4x32768x432 fp16:
        # 256 tiles, split 2 0.84x, unsplit 1.07x), save over a long K (below)
        # 16-bit under two waves: K split towards four programs a multiprocessor where each
        # part keeps SKINNY_PART_K of K and that splits finer (H200, 2026-11-27, device us,
        # earlier pick -> this: 2x8900x5805 fp16, 140 tiles, unsplit -> 4 parts 89.0 -> 45.5,
        # 8x10703x5537 bf16 110.1 -> 93.5, 32x4095x8192 bf16 5 -> 8 parts 108.3 -> 80.2,
        # 8x1567x16133 bf16 11 -> 15 parts 66.3 -> 55.1, 11x2039x11560 fp16 9 -> 11 54.2 ->
        # 55.7; 11x13217x3984 bf16 unsplit -> 3 parts 82.1 -> 88.8). Parts under 512 of K
        # lost in an A/B (59x1181x4097 bf16 at 146 a part 27.6 -> 34.5, 19x16384x513 bf16 at
        # 256 15.9 -> 25.6), and 7x2049x5557 bf16 ran 25.1 at 8 parts, 33.8 at 10, 29.9 at 16.
        more = (_split(cfg, m, n, k, 2 * TARGET_PROGRAMS, 32, SKINNY_PART_K)
                if wide and tiles < TARGET_PROGRAMS else cfg)
        if tiles >= (ONE_WAVE if wide else TARGET_PROGRAMS):
            return more
        if cfg.block_m > 32 and tiles >= FEW_TILES:
            return _split(cfg, m, n, k, TARGET_PROGRAMS, 2, 2 * bk)
        fewer = _split(cfg, m, n, k, TARGET_PROGRAMS, 32 if cfg.block_m <= 16 else 16, 2 * bk)
        return more if more.split_k > fewer.split_k else fewer
    if (SHORT_K // 2 < k <= SMALL_PRODUCT_K and m * k + k * n <= SMALL_OPERANDS
            and cdiv(m, 64) * cdiv(n, 128) < ONE_WAVE):
        # a small product over a K of a few tiles: the copies of operands off 16 bytes cost
        # more than reading them in place, and 32x64 tiles give the grid more programs (H200
        # tile run, 2026-11-27, device time x torch, picked -> 32x64 in place: 79x289x127 fp16
        # 0.41 -> 0.69, 85x379x131 fp16 t 0.49 -> 0.80, 511x129x64 fp16 0.76 -> 0.95,
        # 128x4095x64 fp16 0.89 -> 1.04)
        return MMConfig(32, 64, bk, 4, 4, copy_unaligned=False)
    if (not a_columns and n >= (WIDE_TILE_MIN_N if k > SHORT_K else SHORT_K_WIDE_N)
            and n % 8 == 0 and k > SHORT_K // 2 and cdiv(m, 128) * cdiv(n, 256) >= ONE_WAVE // 2):
        # half a wave of 128x256 tiles or more, C's rows on 16 bytes: their larger
        # products per load beat more, smaller tiles whatever K (H200 A/B, 2026-11-27, x torch
        # launch-inclusive, earlier pick -> 128x256: 419x8192x608 bf16 0.61 -> 0.83 and
        # 941x8192x1024 bf16 0.65 -> 0.85 from 128x128, 3343x1024x16384 fp16 0.61 -> 0.87,
        # 1231x2048x1496 bf16 0.58 -> 0.76, 839x4096x1024 fp16 0.73 -> 0.89 from 64x128).
        # Odd column counts lost (1304x3251x787 bf16 2.01 -> 1.71, 1948x1025x627 fp16 1.79
        # -> 1.49, 3001x2999x1023 bf16 2.36 -> 2.16); 1024^3 bf16, 32 such tiles, keeps 64x128.
        # Columns a multiple of 8, not 16 (H200 A/B, 2026-11-28, device time, 128x128 ->
        # 128x256): 800x2520x2628 fp16 1.13x, 652x7816x1024 bf16 1.07x, 4096x3192x1645 fp16
        # 0.96x (3.8x torch).
        # K of 33-64 too, where the product is its output's write, over rows of 8192 or more
        # (H200 A/B, x torch launch-inclusive, 64x128 -> 128x256: 16384x16384x63 bf16 1.11 ->
        # 1.48, 12437x10672x64 bf16 0.56 -> 0.67, 511x16384x64 fp16 0.70 -> 0.80; 4312x1024x64
        # fp16 lost, 0.82 -> 0.70)
        return MMConfig(128, 256, 64, 8, 3)
    if k <= SHORT_K:
        # the product is its output's write: mid-sized tiles (8192x2047x13 bf16 64x128 1.25,
        # 128x256 1.16; 16384x4097x2 fp16 1.08 / 1.09; over 3 random sweeps 41 of 49 such
        # 16-bit shapes at torch's speed, 29 with 128-row tiles)
        return MMConfig(64, 128, bk, 4, 4)
    tiles_128 = cdiv(m, 128) * cdiv(n, 128)
    if tiles_128 >= TWO_WAVES:
        if (k >= LONG_K or tiles_128 >= WIDE_GRID) and not a_columns:
            # 2048x8192x1449 bf16: 1024 tiles, 128x256 3.57x torch, 128x128 2.62x
            return MMConfig(128, 256, 64, 8, 3)
        # 4096^3 bf16, both operands transposed: 128x128 0.78, 128x256 0.70
        return MMConfig(128, 128, 64, 8, 3)
    if (k >= VERY_LONG_K and not a_columns
            and cdiv(m, 128) * cdiv(n, 256) >= WIDE_SPLIT_MIN_TILES):
        # a very long K over a dozen or more 128x256 tiles: those, split towards one wave in a
        # power of two of parts, beat more, smaller tiles split finer (H200 tile run,
        # 2026-11-27, device us, picked -> 128x256: 336x1024x16384 bf16 56.8 -> 44.6 split 8,
        # 937x364x16384 fp16 73.7 -> 62.4 split 8, 2047x1024x16384 fp16 131.3 -> 116.1 split
        # 2); fewer tiles, or K of 8192, lost or tied (488x368x16384 29.8 -> 31.0, 128x4545x8192
        # 138.9 -> 143.4)
        return _split(MMConfig(128, 256, 64, 8, 3), m, n, k, ONE_WAVE, 32, 2 * bk,
                      power_of_two=True)
    # under two waves of 128x128 tiles, half-height tiles keep more SMs busy (8192x384x2048
    # bf16: 192 tiles of 128x128, 0.38x torch); a grid under half the SMs also splits a long K
    # (73x2047x4096 bf16: 32 tiles, 0.56x torch unsplit; 128x384x8193 fp16 split 16 1.15)
    cfg = MMConfig(64, 128, bk, 4, 4)
    tiles = cdiv(m, 64) * cdiv(n, 128)
    if k < SPLIT_MIN_K and tiles < FEW_TILES // 2:
        # K too short to split and fewer than 32 such tiles: 32x64 tiles, four times the
        # programs (H200 tile run, 2026-11-27, device us, 64x128 -> 32x64: 180x311x888 fp16
        # 16.1 -> 14.1, 269x129x700 fp16 18.3 -> 16.7; 352x1024x700 bf16, 48 tiles, 14.9 ->
        # 15.2; then an A/B of the record's 9 such rows, x torch launch-inclusive: 8 faster by
        # 6-17%, none slower, 512x157x700 fp16 1.00 -> 1.12, 180x311x888 fp16 0.83 -> 0.93,
        # 108x409x892 bf16 by columns 0.67 -> 0.72)
        return MMConfig(32, 64, bk, 4, 4)
    if tiles >= FEW_TILES or k < SPLIT_MIN_K:
        return cfg
    if k < NARROW_MIN_SPLIT_K and cdiv(m, 64) * cdiv(n, 64) >= FEW_TILES:
        # a K of a few tiles: half-width tiles fill the grid where a split's second launch and
        # fp32 partial products cost more (129x2264x1240 fp16 on an H200: 64x64 unsplit 0.76x
        # torch, 64x128 split 4 0.46x)
        return MMConfig(64, 64, bk, 4, 4)
    if (k < LONG_K and cdiv(m, 64) * cdiv(n, 64) < FEW_TILES
            and cdiv(m, 32) * cdiv(n, 64) > FEW_TILES // 2):
        # a grid too small even at 64x64 over a K under LONG_K: 32x64 tiles unsplit give it
        # four times the programs without the split's partial sums and second launch (H200
        # A/B, 2026-11-27, device time x torch, split 64x128 -> 32x64 unsplit: 128x1023x1032
        # bf16 0.84 -> 0.96, 166x919x1176 bf16 t 0.85 -> 1.06, 400x511x1741 fp16 t 0.85 ->
        # 0.99, 367x256x1025 bf16 0.74 -> 0.91; 10 rows faster by 6-24%). 32 such tiles or
        # fewer stay split (128x497x1348 bf16: 32 tiles, 7% slower unsplit; 75x260x1025: 15,
        # 3%), as does a longer K (257x383x5043 lost unsplit in a tile run).
        return MMConfig(32, 64, bk, 4, 4)
    return _split(cfg, m, n, k, TARGET_PROGRAMS, 16, 4 * bk)


@triton.jit
def _store_tile(acc, c_ptr, out_ptr, counters_ptr, rm, rn, M, N, stride_cs, stride_cm,
                SUM_HERE: tl.constexpr):
    """Store a program's (BLOCK_M, BLOCK_N) tile `acc` into c_ptr: C, or under split K its part's
    slice of the fp32 partial products ((parts, M, N), stride_cs apart, rows stride_cm apart as
    C's are). SUM_HERE: the program that finishes a tile's last part also sums the parts, in
    part order, into C at out_ptr and sets the tile's counter back to zero for the next launch
    (_mm_counters), instead of a second launch summing them (see sums_in_kernel)."""
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    offsets = rm[:, None].to(tl.int64) * stride_cm + rn[None, :]
    part = c_ptr + tl.program_id(1).to(tl.int64) * stride_cs + offsets
    tl.store(part, acc.to(c_ptr.dtype.element_ty), mask=mask)
    if SUM_HERE:
        # every thread's partial is stored before one thread counts the part done; the
        # counter's release/acquire orders those stores before the last program's loads
        tl.debug_barrier()
        counter = counters_ptr + tl.program_id(0)
        done = tl.atomic_add(counter, 1, sem="acq_rel", scope="gpu")
        if done == tl.num_programs(1) - 1:
            total = tl.zeros_like(acc)
            at = c_ptr + offsets  # stepped part by part: no 32-bit part * stride product
            for _ in range(0, tl.num_programs(1)):
                # through L2: the other parts were written by other multiprocessors
                total += tl.load(at, mask=mask, other=0.0, cache_modifier=".cg")
                at += stride_cs
            tl.store(out_ptr + offsets, total.to(out_ptr.dtype.element_ty), mask=mask)
            tl.atomic_xchg(counter, 0)


@triton.jit
def _mm_kernel(a_ptr, b_ptr, c_ptr, out_ptr, counters_ptr, M, N, K, k_per_split, stride_am,
               stride_ak, stride_bk, stride_bn, stride_cs, stride_cm, m_load, n_load,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
               GROUP_M: tl.constexpr, DOT_PRECISION: tl.constexpr, ALIGN_AM: tl.constexpr,
               ALIGN_AK: tl.constexpr, ALIGN_BK: tl.constexpr, ALIGN_BN: tl.constexpr,
               ALIGN_ML: tl.constexpr, ALIGN_NL: tl.constexpr, ALIGN_C: tl.constexpr,
               NO_TAIL: tl.constexpr, SUM_HERE: tl.constexpr):
    _one_tile(tl.program_id(0), a_ptr, b_ptr, c_ptr, out_ptr, counters_ptr, M, N, K, k_per_split,
              stride_am, stride_ak, stride_bk, stride_bn, stride_cs, stride_cm, m_load, n_load,
              BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, DOT_PRECISION, ALIGN_AM, ALIGN_AK, ALIGN_BK,
              ALIGN_BN, ALIGN_ML, ALIGN_NL, ALIGN_C, NO_TAIL, SUM_HERE, False)


@triton.jit
def _mm_persistent_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk,
                          stride_bn, stride_cm, m_load, n_load, BLOCK_M: tl.constexpr,
                          BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                          DOT_PRECISION: tl.constexpr, ALIGN_AM: tl.constexpr,
                          ALIGN_AK: tl.constexpr, ALIGN_BK: tl.constexpr,
                          ALIGN_BN: tl.constexpr, ALIGN_ML: tl.constexpr,
                          ALIGN_NL: tl.constexpr, ALIGN_C: tl.constexpr):
    # K within one K tile, unsplit: each program takes output tiles num_programs apart, in one
    # flattened loop, so that the next tile's loads overlap this tile's stores
    tiles = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N)
    for tile in tl.range(tl.program_id(0), tiles, tl.num_programs(0), flatten=True):
        _one_tile(tile, a_ptr, b_ptr, c_ptr, c_ptr, c_ptr, M, N, K, K, stride_am, stride_ak,
                  stride_bk, stride_bn, 0, stride_cm, m_load, n_load, BLOCK_M, BLOCK_N, BLOCK_K,
                  GROUP_M, DOT_PRECISION, ALIGN_AM, ALIGN_AK, ALIGN_BK, ALIGN_BN, ALIGN_ML,
                  ALIGN_NL, ALIGN_C, False, False, True)


@triton.jit
def _one_tile(tile, a_ptr, b_ptr, c_ptr, out_ptr, counters_ptr, M, N, K, k_per_split, stride_am,
              stride_ak, stride_bk, stride_bn, stride_cs, stride_cm, m_load, n_load,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
              GROUP_M: tl.constexpr, DOT_PRECISION: tl.constexpr, ALIGN_AM: tl.constexpr,
              ALIGN_AK: tl.constexpr, ALIGN_BK: tl.constexpr, ALIGN_BN: tl.constexpr,
              ALIGN_ML: tl.constexpr, ALIGN_NL: tl.constexpr, ALIGN_C: tl.constexpr,
              NO_TAIL: tl.constexpr, SUM_HERE: tl.constexpr, ONE_STEP: tl.constexpr):
    """Output tile `tile` (in grouped order) of split program_id(1); ONE_STEP: K fits one
    K tile, loaded once with a mask along K (no loop and no separate tail to compile)."""
    # Exact rewrites that show the compiler what divides the row strides (Triton itself only
    # marks multiples of 16): a bf16 stride of 1000 is 16-byte aligned, and unseen that
    # alignment turns every tile load into 2-byte scalar loads.
    stride_am = (stride_am // ALIGN_AM) * ALIGN_AM
    stride_ak = (stride_ak // ALIGN_AK) * ALIGN_AK
    stride_bk = (stride_bk // ALIGN_BK) * ALIGN_BK
    stride_bn = (stride_bn // ALIGN_BN) * ALIGN_BN
    # The load bounds too: a bound of 1080 masks whole 8-element vectors, which the compiler
    # sees only when told. Untold, 512x1080x1176 bf16 ran at 0.13x torch where 1024x1024x1000
    # (bound divisible by 16) ran at 0.90x (H100, 2026-11-26).
    m_load = (m_load // ALIGN_ML) * ALIGN_ML
    n_load = (n_load // ALIGN_NL) * ALIGN_NL
    # And the output's: N (its store mask) and the output's row and split steps. Unseen,
    # a 64x128 fp16 tile over 4408 columns stored 2-byte elements (64 stores a thread, 158
    # registers); stated, 16-byte vectors (8 stores, 126 registers), compiled for sm_90.
    N = (N // ALIGN_C) * ALIGN_C
    stride_cm = (stride_cm // ALIGN_C) * ALIGN_C
    stride_cs = (stride_cs // ALIGN_C) * ALIGN_C
    split = tl.program_id(1)
    pid_m, pid_n = grouped_tile(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    k_lo = split * k_per_split
    k_len = tl.minimum(k_lo + k_per_split, K) - k_lo
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = (a_ptr + rm[:, None].to(tl.int64) * stride_am
              + (k_lo + rk[None, :]).to(tl.int64) * stride_ak)
    b_ptrs = (b_ptr + (k_lo + rk[:, None]).to(tl.int64) * stride_bk
              + rn[None, :].to(tl.int64) * stride_bn)
    # Loads are masked on M and N only (m_load/n_load: M and N, or the padded width of a
    # buffer this module allocated), never on K inside the loop: a mask against a K that is
    # not a multiple of the vector width would split every load into scalars.
    a_mask = rm[:, None] < m_load
    b_mask = rn[None, :] < n_load
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    if ONE_STEP:
        a = tl.load(a_ptrs, mask=a_mask & (rk[None, :] < k_len), other=0.0)
        b = tl.load(b_ptrs, mask=b_mask & (rk[:, None] < k_len), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=DOT_PRECISION)
    else:
        for _ in range(0, k_len // BLOCK_K):
            a = tl.load(a_ptrs, mask=a_mask, other=0.0)
            b = tl.load(b_ptrs, mask=b_mask, other=0.0)
            acc = tl.dot(a, b, acc, input_precision=DOT_PRECISION)
            a_ptrs += BLOCK_K * stride_ak
            b_ptrs += BLOCK_K * stride_bk
        # The partial last tile of K, masked. Where K divides evenly, whether this code is
        # compiled in at all changes what the compiler makes of the main loop (NO_TAIL).
        k_left = k_len % BLOCK_K
        if not NO_TAIL and k_left > 0:
            a = tl.load(a_ptrs, mask=a_mask & (rk[None, :] < k_left), other=0.0)
            b = tl.load(b_ptrs, mask=b_mask & (rk[:, None] < k_left), other=0.0)
            acc = tl.dot(a, b, acc, input_precision=DOT_PRECISION)
    _store_tile(acc, c_ptr, out_ptr, counters_ptr, rm, rn, M, N, stride_cs, stride_cm,
                SUM_HERE)


# Matrix-vector products (M == 1 or N == 1) with enough output rows take one launch of a
# plain multiply-and-sum kernel instead of the tile product with split K, which pays for a
# second launch and an fp32 partials allocation that users see in every call.
GEMV_BLOCK_R = 32
# (outputs from, outputs to, K up to) of a GEMV with rows along N run as one launch of 8-output
# programs: the span the tile run measured it on (fewer outputs leave too few programs)
SMALL_GEMV = (256, 2048, 4096)
GEMV_NARROW_PROGRAMS = 384  # rows along K: halved while fewer programs than this
# rows along N: from this many outputs wider programs (fp32 over K up to GEMV_SHORT_K)
GEMV_WIDE_ROWS, GEMV_SHORT_K = 16384, 512
GEMV_MIN_ROWS = 4096  # fewer rows than this leave SMs idle unless K is split
GEMV_LONG_K = 2048  # rows along N, fp32 rows on 16 bytes: from this K, wider K steps
# one row times a 16-bit matrix stored row by row (see row_times_wide_matrix): outputs from
# which aligned rows take its kernels (32-output GEMV programs or the tile kernel), and the
# span of outputs unaligned rows take 16-output GEMV programs in (the spans the runs measured)
ALONG_N_TILES = 1024
ALONG_N_WIDE = 16384  # from this many aligned outputs gemv_config's pick (1x16384x3433 bf16:
#                       2.03x torch, the tile kernel 1.78x, on an H200)
ALONG_N_NARROW = (2049, 8192)
ALONG_N_MIN_K = 1024  # the tile runs' products had K of 1741-16384


@dataclass(frozen=True)
class GemvConfig:
    """Tile of the matrix-vector kernel: BLOCK_R outputs per program, BLOCK_K of K a step;
    split_k > 1: K shared by that many programs per output block, their fp32 partial sums added
    by a second launch."""

    block_r: int
    block_k: int
    warps: int
    stages: int
    split_k: int = 1


def _gemv_split(cfg: GemvConfig, rows: int, k: int, narrow: bool) -> GemvConfig:
    """Too few output blocks to fill the device: fewer rows per program where `narrow` (the
    matrix's rows run along K: no second launch), each with a step along K twice as long (up
    to K's length), then K split (728x1x16384 fp32: 91 programs of 8 rows, 0.58x torch;
    1x513x16384 fp32, rows along N: 65 programs, 0.42x)."""
    while narrow and cfg.block_r > 1 and cdiv(rows, cfg.block_r) < GEMV_NARROW_PROGRAMS:
        # as many elements a step as before, along K: halved rows alone left each thread one
        # 16-byte load a step (H200 A/B, 2026-11-27, device time x torch, halved rows ->
        # this: 728x1x16384 fp32 0.58 -> 1.07, 1307x1x16383 fp32 0.58 -> 0.77, 1025x1x9929
        # fp16 0.84 -> 0.99; of the 16 rows it changes 15 ran 1.03-1.82x faster, one 0.99x).
        # Towards GEMV_NARROW_PROGRAMS, not TARGET_PROGRAMS (H200 A/B, 2026-11-28, device
        # time, programs before -> after one more halving: 2136x1x4127 fp32 267 -> 534 1.31x
        # faster, 1307x1x16383 fp32 327 -> 654 1.22x, 1112x1x544 bf16, 693x1x907 fp32 and
        # 728x1x16384 fp32 within 2%; past 384 it lost: 1579x1x4097 bf16 395 -> 790 0.89x,
        # 1025x1x9929 fp16 513 -> 1025 0.83x, 1024x1x1624 fp32 512 -> 1024 0.89x)
        cfg = replace(cfg, block_r=cfg.block_r // 2,
                      block_k=min(cfg.block_k * 2, max(cfg.block_k, next_power_of_2(k))))
    programs = cdiv(rows, cfg.block_r)
    if programs >= TARGET_PROGRAMS:
        return cfg
    split = min(cdiv(2 * TARGET_PROGRAMS, programs), k // (4 * cfg.block_k), 32)
    return replace(cfg, split_k=split) if split > 1 else cfg


def gemv_config(rows: int, k: int, dtype: torch.dtype, k_contiguous: bool,
                rows_aligned: bool = False) -> GemvConfig:
    """The GEMV tile for `rows` outputs over `k` (`k_contiguous`: the matrix's rows run along
    K; `rows_aligned`: its rows, or columns, start 16 bytes apart or a multiple of that).
    From one H100 sweep (2026-11-26, bf16, us; torch in brackets): r-contiguous 8192x8192
    32x256/4 60.7, 32x512/8 62.2 (59.4); 14336x4096 32x128/4 55.3, 32x256 62.6 (56.0);
    4096x14336 32x512/8 54.9, 32x256 66.6 (54.8); 1001x30011 8x512 69.2, 32x256 170 (65.3);
    k-contiguous 8192x8192 8x512 59.6, 32x256 62.7 (60.5)."""
    wide = dtype.itemsize == 2
    if k_contiguous:
        return _gemv_split(GemvConfig(8, 512 if wide else 256, 4, 3), rows, k, narrow=True)
    if SMALL_GEMV[0] <= rows <= SMALL_GEMV[1] and k <= SMALL_GEMV[2]:
        # a few hundred outputs over a moderate K, rows along N: one launch of 8-output
        # programs beats a split's second launch (H100 GEMV tile run, 2026-11-27, x torch launch-inclusive:
        # 1x787x392 fp16 0.91x at 32x128 -> 1.42x at 8x512/w8, 1x431x1080 fp16 0.71x -> 1.15x,
        # 1x1459x3049 bf16 0.86x -> 1.18x, 1x541x2048 fp32 0.67x -> 0.98x)
        return GemvConfig(8, 512, 8, 3)
    if rows < GEMV_MIN_ROWS:
        # rows run along N: a program's rows are one contiguous stretch, so wide ones
        return _gemv_split(GemvConfig(GEMV_BLOCK_R, 128, 4, 4), rows, k, narrow=False)
    if k >= 2 * rows:
        return GemvConfig(GEMV_BLOCK_R, 512 if wide else 256, 8, 3)
    if not wide and rows_aligned and k >= GEMV_LONG_K and rows < GEMV_WIDE_ROWS:
        # fp32 over a long K: 256 of K a step (H200 A/B, 2026-11-28, device time, 32x128 ->
        # 32x256/w4s3: 1x6544x2048 1.20x, 1x8192x8192 1.07x, 1x8192x5158 1.05x; rows off 16
        # bytes lost, 1x8193x4830 0.79x); the outputs' span is the one measured
        return GemvConfig(GEMV_BLOCK_R, 256, 4, 3)
    if 2 * k <= rows:
        # 16-bit: 16 outputs a program over 3 stages (H200 A/B, 2026-11-28, x torch
        # launch-inclusive, 32x128/s4 -> 16x128/s3: 1x19661x256 bf16 0.66 -> 0.96, 1x31013x1635
        # fp16 0.72 -> 0.96, 8648x1x3343 bf16 t 0.86 -> 0.99, 1x18229x983 fp16 1.94 -> 2.63;
        # 1x16384x3433 bf16 1.99 -> 1.81, 1x32768x2048 bf16 0.81 -> 0.79). fp32 came out
        # even (1x26783x293 slice 0.79 -> 0.86, 1x25126x1408 0.90 -> 0.85) and keeps 32.
        if rows >= GEMV_WIDE_ROWS:
            # from 16384 outputs wider programs (H200 A/B, 2026-11-28, x torch
            # launch-inclusive, 16-bit with rows on 16 bytes 16x128/s3 -> 64x128/s3:
            # 1x32768x2048 bf16 0.75 -> 0.96, 32768x1x631 bf16 t 1.94 -> 2.69, 1x16384x641
            # bf16 1.56 -> 1.82; fp32 over a short K 32x128/s4 -> 128x64/s3: 1x26783x293
            # slice 0.81 -> 1.15). Fewer outputs lost (8648x1x3343 bf16 t 0.96 -> 0.90,
            # 1x4096x511 fp16 1.64 -> 1.56, 8191x1x512 fp32 t 0.89 -> 0.71).
            if wide and rows_aligned:
                return GemvConfig(64, 128, 4, 3)
            if not wide and k <= GEMV_SHORT_K:
                return GemvConfig(128, 64, 4, 3)
        return GemvConfig(16, 128, 4, 3) if wide else GemvConfig(GEMV_BLOCK_R, 128, 4, 4)
    return GemvConfig(GEMV_BLOCK_R, 256 if wide else 128, 4, 3)


@triton.jit
def _gemv_kernel(mat_ptr, vec_ptr, out_ptr, R, K, k_per_split, stride_r, stride_k, stride_v,
                 stride_s, stride_o, BLOCK_R: tl.constexpr, BLOCK_K: tl.constexpr,
                 ALIGN_R: tl.constexpr, ALIGN_K: tl.constexpr, ALIGN_RL: tl.constexpr,
                 SPLIT: tl.constexpr):
    stride_r = (stride_r // ALIGN_R) * ALIGN_R  # exact: tells the compiler it divides
    stride_k = (stride_k // ALIGN_K) * ALIGN_K  # exact: tells the compiler it divides
    # The outputs' bound too: where the outputs are the matrix's contiguous dim (rows along
    # N), a bound the compiler cannot see divides by 8 masks every 2-byte element on its own.
    # Compiled for sm_90, 32x256 bf16 tiles loaded 2-byte scalars for 4408 outputs (Triton
    # marks only multiples of 16) and 16-byte vectors with the bound stated; 1x4408x8192 bf16
    # read 0.42-0.53x torch, 1x8192x8192 0.90-0.97x.
    R = (R // ALIGN_RL) * ALIGN_RL
    # Unsplit, K's start is a constant 0: computed from the program id instead, it cost
    # 1x8191x4384 fp16 (rows along N) 1786 us where 54 us was the time before (H100).
    if SPLIT:
        split = tl.program_id(1)
        k_lo = split * k_per_split
        k_len = tl.minimum(k_lo + k_per_split, K) - k_lo
        out_ptr += split.to(tl.int64) * stride_s
    else:
        k_lo = 0
        k_len = K
    rr = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    rk = tl.arange(0, BLOCK_K)
    r_mask = rr[:, None] < R
    ptrs = (mat_ptr + rr[:, None].to(tl.int64) * stride_r
            + (k_lo + rk[None, :]).to(tl.int64) * stride_k)
    v_ptrs = vec_ptr + (k_lo + rk).to(tl.int64) * stride_v
    acc = tl.zeros([BLOCK_R, BLOCK_K], dtype=tl.float32)
    for _ in range(0, k_len // BLOCK_K):  # full tiles: no mask along K (vector loads)
        m = tl.load(ptrs, mask=r_mask, other=0.0).to(tl.float32)
        v = tl.load(v_ptrs).to(tl.float32)
        acc += m * v[None, :]
        ptrs += BLOCK_K * stride_k
        v_ptrs += BLOCK_K * stride_v
    k_left = k_len % BLOCK_K
    if k_left > 0:
        m = tl.load(ptrs, mask=r_mask & (rk[None, :] < k_left), other=0.0).to(tl.float32)
        v = tl.load(v_ptrs, mask=rk < k_left, other=0.0).to(tl.float32)
        acc += m * v[None, :]
    total = tl.sum(acc, axis=1)
    tl.store(out_ptr + rr.to(tl.int64) * stride_o,
             total.to(out_ptr.dtype.element_ty), mask=rr < R)


def gemv_into(c: torch.Tensor, a: torch.Tensor, b: torch.Tensor, cfg: GemvConfig) -> None:
    """c = a @ b where a has one row or b one column: one launch, two with K split."""
    m, k = a.shape
    if m == 1:  # c[0, j] = sum_k a[0, k] * b[k, j]: rows of the matrix are b's columns
        mat, rows = b, b.shape[1]
        s_r, s_k, vec, s_v, s_o = b.stride(1), b.stride(0), a, a.stride(1), c.stride(1)
    else:  # c[i, 0] = sum_k a[i, k] * b[k, 0]
        mat, rows = a, m
        s_r, s_k, vec, s_v, s_o = a.stride(0), a.stride(1), b, b.stride(0), c.stride(0)
    k_per_split = cdiv(cdiv(k, cfg.split_k), cfg.block_k) * cfg.block_k
    splits = cdiv(k, k_per_split)
    dst = c if splits == 1 else torch.empty((splits, rows), dtype=torch.float32,
                                             device=c.device)
    s_s, s_o = (0, s_o) if splits == 1 else (rows, 1)
    kernel: Any = _gemv_kernel
    kernel[(cdiv(rows, cfg.block_r), splits)](
        mat, vec, dst, rows, k, k_per_split, s_r, s_k, s_v, s_s, s_o, BLOCK_R=cfg.block_r,
        BLOCK_K=cfg.block_k, ALIGN_R=alignment(s_r), ALIGN_K=alignment(s_k),
        ALIGN_RL=alignment(rows), SPLIT=splits > 1, num_warps=cfg.warps, num_stages=cfg.stages)
    if splits > 1:
        sum_partials(dst, splits, rows, c)


def dot_precision(dtype: torch.dtype) -> str:
    """fp32 inputs: 3xTF32, near-fp32 accuracy on tensor cores. Plain TF32 (Triton's default)
    misses the fp32 tolerance at K=1024 (seen on an H200, 2026-11-26: max error 0.12 > 0.10)."""
    return "tf32x3" if dtype == torch.float32 else "tf32"


def _by_columns(t: torch.Tensor) -> bool:
    """`t` is stored column by column (a transposed operand, read in place)."""
    return t.stride(0) == 1 and t.stride(1) != 1


def _aligned(t: torch.Tensor) -> tuple[torch.Tensor, int]:
    """(`t`, its contiguous length) when its rows (or columns) start on 16 bytes, else (a copy
    whose row stride, or for a 16-bit operand stored by columns its column stride, is padded
    to 16 elements, the padded length): unaligned rows keep the
    tile loads from using 16-byte vectors and asynchronous copies (H200, 2026-11-26:
    4097x3001x1999 bf16 1682 us, torch 396). The copy moves each element twice, small beside
    the product for m > 64. The padded length bounds loads along the contiguous dim: a bound
    that is a multiple of 16 keeps those loads vectorised (the extra lanes are never stored)."""
    rows, cols = t.shape
    if on_16_bytes(t):
        return t, cols if t.stride(1) == 1 else rows
    if t.element_size() == 2 and _by_columns(t):
        # a 16-bit operand stored by columns keeps that order: copied row by row it was a
        # transposing pass (H200 A/B, 2026-11-27, device us, both operands by columns, row by
        # row -> own order: 256x8192x7415 bf16 444 -> 196, 424x5256x7769 fp16 430 -> 225,
        # 1025x1181x4095 bf16 103 -> 63, 1430x8192x2047 bf16 214 -> 139; of 16 such rows 12
        # faster by 11-126%, 3 within 2%, 108x409x892 bf16 16.7 -> 17.9)
        padded, height = _aligned(t.t())
        return padded.t(), height
    return _row_copy(t)


def _row_copy(t: torch.Tensor) -> tuple[torch.Tensor, int]:
    """(a copy of `t` stored row by row, its rows padded to 16 elements; that padded width)."""
    rows, cols = t.shape
    width = cdiv(cols, 16) * 16
    padded = torch.empty((rows, width), dtype=t.dtype, device=t.device)[:, :cols]
    padded.copy_(t)
    return padded, width


def worth_copying(a: torch.Tensor, b: torch.Tensor, cfg: MMConfig) -> tuple[bool, bool]:
    """(copy A, copy B) to aligned rows, for a configuration that asks for copies (_aligned
    leaves aligned operands alone either way). Products of up to 64 rows read A hardly at all
    and never copy it (mm_config's read B in place: 32x4095x8192 bf16 0.76x torch in place at
    32x64 tiles, 0.55x copied). An fp32 operand stored row by row that the product reads
    fewer than COPY_READS times (once per row or column of output tiles) is read in place: the
    copy costs about two such reads, and fp32 rows lose little to narrower loads (H100 A/B,
    2026-11-27: 19x8978x4400 0.66x torch copied, 1.43x in place; 29x11657x2315 0.61x, 1.06x;
    2048x256x4363 0.71x, 0.90x). 16-bit operands and operands stored column by column stay
    copied: read in place the same way, 128x4545x8192 fp16 fell from 0.64x to 0.10x and
    108x409x892 bf16 transposed from 0.68x to 0.29x (with an earlier kernel: the picked 32x64
    tiles now read it in place, `reads_small_in_place`). A large 16-bit operand stored column
    by column (LARGE_BY_COLUMNS elements) read fewer than COPY_READS times is read in place
    (103x32768x938 bf16 transposed, 128x128 tiles, on an H200: 0.30x torch with B copied,
    1.47x in place in the A/B, measured when such a copy was a transposing pass; with copies
    in each operand's own order, B still in place, 50.5 -> 49.6 us). A 16-bit operand stored
    row by row whose rows start 8 bytes apart (a multiple of 4 elements, not of 8) is read in
    place however often: its 8-byte loads cost less than the copy (H200 tile run, 2026-11-27,
    device us, copied -> in place at the same tiles: 4175x256x700 bf16 21.2 -> 12.6,
    352x1024x700 bf16 14.9 -> 10.2; 512x332x2048 fp16, B's rows 332 apart, 18.5 at its best
    copied tiles -> 16.2 in place; rows 2 bytes apart are the ones that fell above), except
    by tiles larger than 64x128 that read it more than 2 * COPY_READS times (H200 A/B,
    2026-11-27, x torch launch-inclusive, copied -> in place: 8192x227x1500 fp16 1.08 ->
    1.86, 8192x552x700 fp16 1.16 -> 1.44, 800x2520x2628 fp16 at 64x128 tiles, A read 20
    times, 1.47 -> 1.70; but 2048x2049x1500 bf16, 128x128 tiles reading A 17 times, 2.18 ->
    1.97, 1427x5227x6524 fp16 and 8192x5077x1500 fp16, 128x256 tiles, 2.78 -> 2.50 and 3.13
    -> 2.91)."""
    m, n = a.shape[0], b.shape[1]

    def in_place(t: torch.Tensor, reads: int) -> bool:
        if (t.element_size() == 2 and t.stride(1) == 1 and step(t) % 4 == 0
                and (reads <= 2 * COPY_READS or cfg.block_m * cfg.block_n <= 64 * 128)):
            return True  # 16-bit rows 8 bytes apart: 8-byte loads cost less than the copy
        by_columns = t.element_size() == 2 and t.stride(0) == 1 and t.numel() >= LARGE_BY_COLUMNS
        return (t.dtype == torch.float32 and t.stride(1) == 1 or by_columns) and reads < COPY_READS

    return (m > 64 and not in_place(a, cdiv(n, cfg.block_n)),
            not in_place(b, cdiv(m, cfg.block_m)))


def reads_small_in_place(cfg: MMConfig, a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether a 16-bit product on 32x64 tiles that would copy an operand reads both in place
    with the pointer kernel (no copy, no descriptors): where no operand's rows (or columns)
    are an odd number of elements apart, so that every tile load is at least 4 bytes wide.
    H200 A/B, 2026-11-28, device time, copied + descriptors -> in place: 108x409x892 bf16 t
    (both operands by columns, steps 108 and 892) 1.37x, 166x919x1176 bf16 t (A's step 166)
    1.31x; with an odd step the 2-byte loads lost: 400x511x1741 fp16 t (B's step 1741) 0.39x,
    15 other products with an odd step 0.39-0.88x, 257x499x513 bf16 t (both odd) 1.00x."""
    return (a.element_size() == 2 and (cfg.block_m, cfg.block_n) == (32, 64) and not cfg.pad_k
            and not _odd_rows(a) and not _odd_rows(b) and any(_copied(a, b, cfg)))


def copies_unaligned(a: torch.Tensor, b: torch.Tensor, cfg: MMConfig) -> bool:
    """Whether mm() copies operands whose rows are off 16 bytes (those `worth_copying` names)
    for `cfg`: never for a K within one tile and small operands (SHORT_K, SMALL_OPERANDS)."""
    return cfg.copy_unaligned and (a.shape[1] > SHORT_K
                                   or a.numel() + b.numel() > SMALL_OPERANDS)


def _odd_rows(t: torch.Tensor) -> bool:
    """A 16-bit operand whose rows (or columns, where it is stored by columns) are an odd
    number of elements apart: its tile loads are 2-byte scalars, staged through registers
    (no asynchronous copy is that narrow; 4-byte steps are copied asynchronously)."""
    return t.element_size() == 2 and step(t) % 2 == 1


def _copied(a: torch.Tensor, b: torch.Tensor, cfg: MMConfig) -> tuple[bool, bool]:
    """(A, B): which operands mm() copies to rows on 16 bytes for `cfg` (K-padded copies
    aside)."""
    return worth_copying(a, b, cfg) if copies_unaligned(a, b, cfg) else (False, False)


def in_place_warps(cfg: MMConfig, a: torch.Tensor, b: torch.Tensor) -> MMConfig:
    """`cfg` with enough warps that the 2-byte elements its threads stage per K step for
    operands read in place with odd row steps stay within IN_PLACE_STAGED. More spill:
    compiled for sm_90, 64x128x64 tiles on 4 warps with B's rows 129 apart take 255 registers
    and spill 1,172 bytes a thread (511x129x64 fp16 ran 16.8 us on an H100 where torch took
    6.1); on 8 warps, or with B's rows 128 apart, nothing spills."""
    if cfg.pad_k and a.shape[1] % cfg.block_k:
        return cfg  # both operands copied with padded rows
    copy_a, copy_b = _copied(a, b, cfg)
    staged = ((cfg.block_m * cfg.block_k if _odd_rows(a) and not copy_a else 0)
              + (cfg.block_k * cfg.block_n if _odd_rows(b) and not copy_b else 0))
    warps = cfg.warps
    while warps < 8 and staged > IN_PLACE_STAGED * 32 * warps:
        warps *= 2
    return replace(cfg, warps=warps)


def _pad_k(t: torch.Tensor, k_dim: int, k_to: int) -> tuple[torch.Tensor, int]:
    """`t` copied in its own memory order with its K extent (dim `k_dim`) zero-padded to `k_to`
    and its contiguous dim padded to 16 elements; (the copy, its contiguous length). Both
    operands' pads must be zeros: an uninitialised pad could hold NaN, and 0 * NaN is NaN."""
    shape = list(t.shape)
    shape[k_dim] = k_to
    inner = 0 if _by_columns(t) else 1
    width = cdiv(shape[inner], 16) * 16
    buf = torch.empty((shape[1 - inner], width), dtype=t.dtype, device=t.device)
    padded = buf[:, :shape[1]] if inner == 1 else buf[:, :shape[0]].t()
    k = t.shape[k_dim]
    padded.narrow(k_dim, k, k_to - k).zero_()
    padded.narrow(k_dim, 0, k).copy_(t)
    return padded, width


def sums_in_kernel(cfg: MMConfig, dtype: torch.dtype, tiles: int, parts: int) -> bool:
    """Whether the pointer kernel's programs sum a product's K parts themselves (the last to
    finish a tile sums its parts: _store_tile) instead of a second launch summing them all;
    True where there is one part (nothing to sum).

    fp32, where at least SUM_HERE_MIN_TILES output tiles share the work and a tile's parts hold
    at most SUM_HERE_MAX_PARTS elements. Two H100 A/Bs (2026-11-28, device time, head vs base,
    every split row of the record summing in the kernel): such rows 13 of 14 and 13 of 16
    faster (median 1.09x, 1.07x; 367x2520x2342 1.15-1.17, 128x1024x1656 1.16-1.17, 16x8193x522
    1.11-1.13, 2048x256x4363 1.10), the slower at 0.90-0.94 (888x129x912 slice, 1023x613x8192,
    3x4095x593 t). Other fp32 splits: 19 of 23 and 21 of 23 slower (median 0.89x, 0.88x): with
    few tiles a handful of programs sum everything at the end (457x129x700 0.85), and large
    parts take long to sum (1072x1024x15584, 128x64 tiles in 4 parts, 0.84). 16-bit products
    lost either way: the pointer kernel's (unaligned operands read in place) 25 of 33 and 31 of
    36 slower (median 0.93x, 0.86x; 11x2039x11560 fp16 0.75), the descriptor kernel's 19 of 21
    and 21 of 22 (median 0.79x, 0.76x), so _mm_tma's kernel never sums its parts."""
    return parts == 1 or (dtype == torch.float32 and tiles >= SUM_HERE_MIN_TILES
                          and parts * cfg.block_m * cfg.block_n <= SUM_HERE_MAX_PARTS)


def _no_tail(a: torch.Tensor, b: torch.Tensor, k: int, block_k: int) -> bool:
    """Leave the masked K tail out of the compiled kernel: only where K divides into tiles, and
    only where that measured faster. H100, 2026-11-26, 4096^3, tail compiled in / left out:
    fp32 (3xTF32) 3457 / 2485 us (torch 2626), bf16 with both operands transposed 463 / 249
    (torch 178), but bf16 row-major 189 / 202 (torch 178), fp16 194 / 206 (torch 182)."""
    if k % block_k:
        return False
    return a.dtype == torch.float32 or a.stride(0) == 1 or b.stride(0) == 1


def row_times_wide_matrix(b: torch.Tensor) -> MMConfig | GemvConfig | None:
    """The kernel for one row of A times a 16-bit B stored row by row, outside the span of
    SMALL_GEMV, where a tile run measured one better than `gemv_config`'s pick; None elsewhere.

    B's rows start on 16 bytes, 1024-16383 outputs: where K is at least 2.5 times the outputs,
    the tile kernel, 16x128 tiles with K split towards two programs per multiprocessor, else
    the GEMV kernel at 32 outputs a program, 512 of K a step (H200 A/B, 2026-11-27, x torch
    launch-inclusive, earlier pick -> this rule: 1x4408x8192 bf16 0.41 -> 0.93, 1x7224x3617
    bf16 0.65 -> 1.06, 1x2968x7687 fp16 0.61 -> 0.96). Before the GEMV kernel stated its
    outputs' bound, the tile kernel won every such shape (an H200 tile run: 11 of 11, the
    worst 1x5520x1936 bf16 0.71 -> 0.77 torch); with it stated, only the long K. Unaligned
    rows, 2049-8192 outputs: the GEMV kernel at 16 outputs a program, 256 of K a step, 8 warps
    (on an H100 and an H200: 1x4097x2129 fp16 0.66 -> 0.99, 1x5007x11504 bf16 0.87 -> 1.07,
    1x8191x4384 fp16 0.89 -> 0.98; more outputs lost: 1x12098x1741 bf16 0.81 -> 0.70)."""
    k, n = b.shape
    if b.element_size() != 2 or b.stride(1) != 1:
        return None
    if SMALL_GEMV[0] <= n <= SMALL_GEMV[1] and k <= SMALL_GEMV[2] or k < ALONG_N_MIN_K:
        return None
    if on_16_bytes(b) and ALONG_N_TILES <= n < ALONG_N_WIDE:
        if 2 * k < 5 * n:
            # with its outputs' bound stated, the GEMV kernel loads 16-byte vectors too; from K
            # about 2.5 times the outputs the tile kernel's split still wins (H200, head tree,
            # device time x torch, 32x512 GEMV vs 16x128 tiles: 1x14336x4096 bf16 0.96 vs
            # 0.89, 1x5600x8192 fp16 0.98 vs 0.92; 1x2048x16384 bf16 0.62 vs 0.96)
            return GemvConfig(32, 512, 4, 3)
        cfg = MMConfig(16, 128, 64, 4, 4, copy_unaligned=False)
        return _split(cfg, 1, n, k, 2 * TARGET_PROGRAMS, 32, 2 * cfg.block_k)
    if ALONG_N_NARROW[0] <= n <= ALONG_N_NARROW[1]:
        return GemvConfig(16, 256, 8, 3)
    return None


def picked_config(a: torch.Tensor, b: torch.Tensor) -> MMConfig | GemvConfig:
    """What mm() runs a @ b with when no `config` is given: for one row or one column of
    output the GEMV kernel (`gemv_config`) or, one row times a wide 16-bit matrix, the kernel
    `row_times_wide_matrix` names; else the tiles `mm_config` picks by shape. Remembered per
    operand geometry (_mm_memo: the rules cost tens of microseconds of host time a call)."""
    return _mm_memo.picked(a, b, _pick)


def _pick(a: torch.Tensor, b: torch.Tensor) -> MMConfig | GemvConfig:
    m, k = a.shape
    n = b.shape[1]
    if min(m, n) == 1:
        k_contiguous = (b.stride(0) == 1) if m == 1 else (a.stride(1) == 1)
        wide_row = row_times_wide_matrix(b) if m == 1 else None
        matrix = b if m == 1 else a
        return wide_row or gemv_config(max(m, n), k, a.dtype, k_contiguous,
                                       rows_aligned=on_16_bytes(matrix))
    cfg = _tiles(a, b, a_rows=False)
    if reads_small_in_place(cfg, a, b):
        return replace(cfg, copy_unaligned=False)
    if a.element_size() == 2:
        # 16-bit tiles through tensor descriptors where the target has them (else the pointer
        # kernel): H200 A/B of 2026-11-27 over the 237 such rows of the record, device time
        # 1.11x at 128x128 tiles (median; none slower), 1.03x at 128x256 (2 rows 6-7% slower),
        # 1.06x at 64x128 (6 of 79 slower, 4576x810x8192 fp16 by 12%), 1.03x at 32x64
        return replace(cfg, tma=True, persistent=persistent_pays(cfg, a, b))
    if one_step_persistent_pays(cfg, a, b):
        return replace(cfg, persistent=True)
    cfg = fp32_tail_warps(cfg, a, b)
    if _by_columns(a):
        # An fp32 A stored by columns, copied row by row, where the row-major tiles then take
        # resident programs. H200 A/B, 2026-11-28, device time x torch, in place -> copied:
        # 8192x4604x9 t 0.81 -> 1.15, 16384x16384x8 t 0.87 -> 1.09, 4835x2096x13 t 0.88 ->
        # 0.97. Copied for every fp32 A by columns, 18 of 24 such rows lost 5-63% (24x8389x607
        # t 1.44 -> 0.54, 5456x3606x6171 t 1.48 -> 1.00), two split ones gained (80x1024x8191
        # t 0.33 -> 0.54, 587x272x1025 t 0.50 -> 0.68) where others of their kind lost.
        rows = _tiles(a, b, a_rows=True)
        if one_step_persistent_pays(rows, a, b):
            return replace(rows, a_rows=True, persistent=True)
    return cfg


def fp32_tail_warps(cfg: MMConfig, a: torch.Tensor, b: torch.Tensor) -> MMConfig:
    """`cfg` on 8 warps where fp32 32x128x32 tiles on 4 would compile a masked K tail over
    both operands read in place with rows off 16 bytes, and the grid has at most a wave of
    output tiles. Compiled for sm_90, such launches took 255 registers and spilled 36-72 bytes
    a thread on 4 warps, 190 registers and no spill on 8. With a program or fewer a
    multiprocessor the spill's latency is not hidden (H200 A/B, 2026-11-28, device time, 4 ->
    8 warps: 24x2049x311 1.11x, 2609x127x23 1.08x, 512x255x63 slice 1.08x, 29x11657x2315
    1.00x); over several waves other programs hide it and 8 warps fit fewer (7314x257x17: 687
    tiles, 0.76x)."""
    m, k = a.shape
    copy_a, copy_b = _copied(a, b, cfg)
    odd = (not on_16_bytes(a) and not copy_a) and (not on_16_bytes(b) and not copy_b)
    if (a.dtype == torch.float32 and (cfg.block_m, cfg.block_n, cfg.block_k, cfg.warps)
            == (32, 128, 32, 4) and k % cfg.block_k and not cfg.pad_k and odd
            and cdiv(m, cfg.block_m) * cdiv(b.shape[1], cfg.block_n) <= ONE_WAVE):
        return replace(cfg, warps=8)
    return cfg


def _tiles(a: torch.Tensor, b: torch.Tensor, a_rows: bool) -> MMConfig:
    """mm_config's tiles for a @ b, with `a_rows`: for A copied row by row first."""
    m, k = a.shape
    a_aligned = a_rows or on_16_bytes(a)
    return in_place_warps(mm_config(m, b.shape[1], k, a.dtype,
                                    a_columns=_by_columns(a) and not a_rows,
                                    unaligned=not (a_aligned and on_16_bytes(b)),
                                    b_odd_rows=_odd_rows(b), a_aligned=a_aligned), a, b)


def one_step_persistent_pays(cfg: MMConfig, a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether an fp32 product (the pointer kernel) runs as resident programs looping over
    output tiles (_mm_persistent_kernel): K unsplit and within one K tile (one load step, no K
    loop), more tiles than two waves, tiles of at most 64 rows, and no two masks at once: K is
    the whole K tile or 1 (which Triton compiles as a constant), or C's rows fall on 16 bytes.

    H200 A/B, 2026-11-28, device time head / base over the 28 fp32 record rows of a wider
    rule (2 rounds each; the one-step rows again in a second A/B): resident programs with a K
    loop lost on every such row (0.75-0.98: 4096x288x896 0.75, 3952x317x256 0.80); with one
    step they gained where K needs no mask (4391x4283x1 t 1.30, 2176x2887x16 1.16, 1847x1025x1
    1.11, 131x11887x16 1.09) or C's rows are aligned (3865x4032x31 1.28; 512x2048x31,
    1024x608x17, 4547x128x3 within 1%), and lost with a masked K and odd rows of C
    (10037x15383x9 0.76, 6358x65x9 0.85, 2402x9101x2 0.90, 7314x257x17 0.96). Every gain was
    at 465 tiles or more; at 143-256 tiles they were within 0.94-1.04 (1024x608x17: 0.99, then
    0.94). Compiled for sm_90, the picked one-step tiles (32x128) take 96-245 registers and
    spill nothing, save 4835x2096x13 t after A's copy (8 bytes; 1.13x faster all the same);
    128-row tiles spill."""
    m, k = a.shape
    n = b.shape[1]
    k_unmasked = k == cfg.block_k or k == 1
    c_aligned = n * a.element_size() % 16 == 0
    return (a.dtype == torch.float32 and cfg.split_k == 1 and cfg.block_m <= 64
            and k <= cfg.block_k and (k_unmasked or c_aligned)
            and cdiv(m, cfg.block_m) * cdiv(n, cfg.block_n) > ONE_STEP_MIN_TILES)


def persistent_pays(cfg: MMConfig, a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether a 16-bit product loaded through descriptors runs as resident programs that take
    one output tile after another (_mm_tma.mm_tma_persistent): K unsplit and at most
    PERSISTENT_MAX_K, more tiles than one wave (fewer give every program one tile either way),
    128x256 or 64x128 tiles (or smaller), both operands stored row by row, C's rows on 16 bytes.

    H200 A/B, 2026-11-28, device time head / base over the 136 record rows with K unsplit and
    more tiles than a wave. Both operands row by row and C's rows on 16 bytes: 128x256 tiles
    0.97-1.46 where K <= 4096 (K under 1500 gaining most: 13460x16384x64 bf16 1.46,
    7119x8192x256 fp16 1.20, 2560x8192x512 bf16 1.13) and 0.93-1.01 past it; 64x128 tiles
    1.00-1.08 but 10536x16384x26 fp16 at 0.90 (1.69x torch still); 128x128 tiles 0.90 and
    0.98. C's rows off 16 bytes: 0.64-0.87 (8192x4657x317 bf16, 8192x5537x1025 bf16); an
    operand stored by columns at 128x128: 0.71-0.93 (4096x4096x4096 bf16 t). A probe on the
    same card (device time, the kernel alone) put the loss on the flattened loop: unflattened,
    those rows ran within 0.97-1.05x of the split-grid kernel, and warp specialisation gained
    nothing over that."""
    m, k = a.shape
    n = b.shape[1]
    return (cfg.split_k == 1 and k <= PERSISTENT_MAX_K
            and cdiv(m, cfg.block_m) * cdiv(n, cfg.block_n) > PERSISTENT_MIN_TILES
            and n % 8 == 0 and (cfg.block_m, cfg.block_n) != (128, 128)
            and not (_by_columns(a) or _by_columns(b)))


def mm(a: torch.Tensor, b: torch.Tensor, *,
       config: MMConfig | GemvConfig | None = None) -> torch.Tensor:
    """a @ b for 2-D float tensors of one dtype (aten::mm); any strides (a transposed operand is
    read in place). One row or one column of output takes the GEMV kernel (`gemv_config`: K
    split where the outputs are few), anything else tiles picked by shape (`mm_config`);
    `config` overrides either choice (tests, benchmarks: an MMConfig forces the tile kernel, a
    GemvConfig the GEMV kernel)."""
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"mm: shapes {tuple(a.shape)} and {tuple(b.shape)} do not multiply")
    if a.dtype != b.dtype or a.dtype not in (torch.float32, torch.float16, torch.bfloat16):
        raise NotImplementedError(f"mm: two float32/float16/bfloat16 operands of one dtype, got "
                                  f"{a.dtype} and {b.dtype}")
    if a.device != b.device:
        raise NotImplementedError("mm: operands on one device only")
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    if c.numel() == 0:
        return c
    if k == 0:
        return c.zero_()
    cfg = config if config is not None else picked_config(a, b)
    if isinstance(cfg, GemvConfig):
        if min(m, n) != 1:
            raise ValueError(f"mm: a GemvConfig needs one row or one column, got {m}x{n}")
        gemv_into(c, a, b, cfg)
        return c
    if cfg.a_rows and _by_columns(a):
        a, _ = _row_copy(a)
    m_load, n_load = m, n
    if cfg.pad_k and k % cfg.block_k:
        k = cdiv(k, cfg.block_k) * cfg.block_k
        a, a_len = _pad_k(a, 1, k)
        b, b_len = _pad_k(b, 0, k)
        m_load = a_len if a.stride(0) == 1 else m
        n_load = b_len if b.stride(1) == 1 else n
    else:
        copy_a, copy_b = _copied(a, b, cfg)
        if copy_a:
            a, a_len = _aligned(a)
            m_load = a_len if _by_columns(a) else m
        if copy_b:
            b, b_len = _aligned(b)
            # a padded length bounds the loads only along the dim that is contiguous
            n_load = b_len if b.stride(1) == 1 else n
    k_per_split = cdiv(cdiv(k, cfg.split_k), cfg.block_k) * cfg.block_k
    splits = cdiv(k, k_per_split)
    dst = c if splits == 1 else torch.empty((splits, m, n), dtype=torch.float32, device=a.device)
    sum_here = False  # the parts summed by the kernel's own programs (never the descriptor one)
    if cfg.tma and _mm_tma.ready(a, b):
        if cfg.persistent and splits == 1:
            _mm_tma.mm_tma_persistent(a, b, c, cfg.block_m, cfg.block_n, cfg.block_k,
                                      cfg.group_m, cfg.warps, cfg.stages)
        else:
            _mm_tma.mm_tma(a, b, dst, k_per_split, splits, cfg.block_m, cfg.block_n,
                           cfg.block_k, cfg.group_m, cfg.warps, cfg.stages)
    else:
        tiles = cdiv(m, cfg.block_m) * cdiv(n, cfg.block_n)
        sum_here = splits > 1 and sums_in_kernel(cfg, a.dtype, tiles, splits)
        # the counters are read only where SUM_HERE; any pointer serves otherwise
        counters = _mm_counters.tile_counters(a.device, tiles) if sum_here else dst
        stride_s = 0 if splits == 1 else dst.stride(0)
        kernel: Any = _mm_kernel
        constants = dict(
            BLOCK_M=cfg.block_m, BLOCK_N=cfg.block_n, BLOCK_K=cfg.block_k, GROUP_M=cfg.group_m,
            DOT_PRECISION=dot_precision(a.dtype), ALIGN_AM=alignment(a.stride(0)),
            ALIGN_AK=alignment(a.stride(1)), ALIGN_BK=alignment(b.stride(0)),
            ALIGN_BN=alignment(b.stride(1)), ALIGN_ML=alignment(m_load),
            ALIGN_NL=alignment(n_load), ALIGN_C=alignment(n, dst.stride(-2), stride_s))
        if cfg.persistent and splits == 1 and k <= cfg.block_k and not cfg.tma:
            # what the compiled kernel's registers and shared memory depend on
            key = ("pointer", a.dtype, cfg.warps, cfg.stages, *constants.values())
            persistent: Any = _mm_persistent_kernel
            compiled = persistent[(min(tiles, _resident.programs(a.device, key)),)](
                a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                m_load, n_load, **constants, num_warps=cfg.warps, num_stages=cfg.stages)
            _resident.learn(a.device, key, compiled)
        else:
            kernel[(tiles, splits)](
                a, b, dst, c, counters, m, n, k, k_per_split, a.stride(0), a.stride(1),
                b.stride(0), b.stride(1), stride_s, dst.stride(-2), m_load, n_load, **constants,
                NO_TAIL=_no_tail(a, b, k, cfg.block_k), SUM_HERE=sum_here, num_warps=cfg.warps,
                num_stages=cfg.stages)
    if splits > 1 and not sum_here:
        sum_partials(dst, splits, m * n, c)
    return c


def make_inputs(case: Case, dtype: torch.dtype, device: torch.device,
                gen: torch.Generator) -> Inputs:
    """A (M, K) and B (K, N) for a case shaped (M, N, K)."""
    m, n, k = case.shape
    return (randn((m, k), dtype, device, gen), randn((k, n), dtype, device, gen)), {}


def _bytes(case: Case, dtype: torch.dtype) -> int:
    m, n, k = case.shape
    return (m * k + k * n + m * n) * dtype.itemsize


SPEC = OpSpec(
    name="mm",
    aten=("mm",),
    generic=mm,
    reference=torch.mm,
    make_inputs=make_inputs,
    ci_cases=(Case((33, 40, 24)), Case((16, 130, 70))),
    full_cases=(Case((4096, 4096, 4096)), Case((1024, 1024, 1024)), Case((16, 4096, 4096)),
                Case((1, 8192, 8192)), Case((8192, 8192, 8192)), Case((4097, 3001, 1999))),
    bytes_moved=_bytes,
    flops=lambda case: 2 * case.shape[0] * case.shape[1] * case.shape[2],
    reduce_size=lambda case: case.shape[2],
    dtypes=(torch.float16, torch.bfloat16, torch.float32),
    # Triton's CPU interpreter multiplies bf16 tl.dot operands as raw bit patterns (garbage).
    interpreter_dtypes=NO_BF16,
)
