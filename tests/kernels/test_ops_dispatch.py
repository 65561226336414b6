"""Each dispatch path the generic ops choose by shape, forced at tiny odd shapes on the
interpreter (or the GPU where there is one), compared with float64 torch: the one-launch GEMV,
mm's unmasked K loop with its masked tail and aligned-stride rewrites, softmax split across
programs for few long rows or copied to rows for few columns down a long dim, and sums over a
short dim with inner columns. Also: the random shapes (seeded,
bounded, every class they promise) and their `--shapes random` plumbing.
"""

from __future__ import annotations

import pytest
import torch

from flagbot.kernels import cli, random_shapes
from flagbot.kernels.check import CheckOptions
from flagbot.kernels.ops import _reduce, _rows, _rows_split
from flagbot.kernels.ops._reduce import reduce_dim
from flagbot.kernels.ops.log_softmax import log_softmax
from flagbot.kernels.ops.mm import GemvConfig, MMConfig, gemv_config, mm, picked_config
from flagbot.kernels.ops.softmax import softmax
from flagbot.kernels.registry import OPS
from flagbot.kernels.spec import numel

from .closeness import DTYPES, assert_close, seeded_randn
from .launch_spy import LaunchSpy, spy_on


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("m", "n", "k"), [(1, 37, 19), (1, 45, 70), (29, 1, 45), (23, 1, 16)])
@pytest.mark.parametrize("transposed", [False, True], ids=["rows", "cols"])
def test_gemv_one_launch_any_orientation_and_k_tail(m: int, n: int, k: int, dtype: torch.dtype,
                                                    transposed: bool,
                                                    device: torch.device) -> None:
    a = seeded_randn(m, k, dtype=dtype, device=device)
    b = seeded_randn(k, n, dtype=dtype, seed=1, device=device)
    if transposed:
        a, b = a.t().contiguous().t(), b.t().contiguous().t()
    # BLOCK_K 16: k = 19, 45, 70 leave a tail; k = 16 has none. BLOCK_R 8 leaves a row tail.
    # Split in 3, K's parts are 16-32 long, the last one shorter or empty.
    for split in (1, 3):
        out = mm(a, b, config=GemvConfig(8, 16, 4, 1, split_k=split))
        assert_close("mm", out, a.double() @ b.double(), k)


def test_gemv_is_picked_for_one_row_or_column_and_refused_otherwise(device: torch.device) -> None:
    assert gemv_config(8192, 8192, torch.bfloat16, k_contiguous=False).split_k == 1
    assert gemv_config(8192, 8192, torch.bfloat16, k_contiguous=True).split_k == 1
    # a few outputs over a long K: K split across programs
    assert gemv_config(100, 30000, torch.bfloat16, k_contiguous=False).split_k > 1
    # a few outputs over a moderate K, rows along N: one launch, 8 outputs a program
    for rows, k in ((256, 392), (787, 392), (2048, 4096)):
        assert gemv_config(rows, k, torch.float16, k_contiguous=False) == GemvConfig(8, 512, 8, 3)
    assert gemv_config(2049, 4096, torch.float16, k_contiguous=False).block_r > 8
    assert gemv_config(2048, 4097, torch.float16, k_contiguous=False).split_k > 1
    assert gemv_config(255, 4096, torch.float16, k_contiguous=False).split_k > 1
    # rows along K: fewer rows per program first (one launch), then a split
    few = gemv_config(728, 16384, torch.float32, k_contiguous=True)
    assert few.block_r < 8 and few.split_k == 1
    # ... each halving of the rows doubling the step along K, as many elements a step
    assert few.block_r * few.block_k == 8 * 256
    assert gemv_config(300, 200, torch.float32, k_contiguous=True).block_k == 256  # K's length
    # ... down to three programs a multiprocessor or more: 2136 rows of 8 are 267 programs,
    # halved to 534; 1579 rows of 4 (395 programs) stay
    assert gemv_config(2136, 4127, torch.float32, k_contiguous=True).block_r == 4
    assert gemv_config(1579, 4097, torch.bfloat16, k_contiguous=True).block_r == 4
    assert gemv_config(100, 16384, torch.float32, k_contiguous=True).split_k > 1
    row, wide_n = (seeded_randn(1, 300, dtype=torch.float16, device=device),
                   seeded_randn(300, 4099, dtype=torch.float16, seed=1, device=device))
    # rows along N, K at most half the outputs: 16-bit 16 outputs a program, fp32 32 ...
    assert gemv_config(8648, 3343, torch.bfloat16, False, rows_aligned=True) == GemvConfig(
        16, 128, 4, 3)
    assert gemv_config(8191, 512, torch.float32, k_contiguous=False) == GemvConfig(32, 128, 4, 4)
    # ... from 16384 outputs 16-bit rows 16 bytes apart take 64, fp32 over K to 512 128x64
    assert gemv_config(16384, 641, torch.bfloat16, False, rows_aligned=True) == GemvConfig(
        64, 128, 4, 3)
    assert gemv_config(19661, 256, torch.bfloat16, k_contiguous=False) == GemvConfig(16, 128, 4, 3)
    assert gemv_config(26783, 293, torch.float32, k_contiguous=False) == GemvConfig(128, 64, 4, 3)
    assert gemv_config(26783, 512, torch.float32, False).block_r == 128
    assert gemv_config(26783, 513, torch.float32, k_contiguous=False) == GemvConfig(32, 128, 4, 4)
    for matrix in (seeded_randn(300, 16400, dtype=torch.float16, device=device),
                   seeded_randn(300, 16408, dtype=torch.float16, device=device)[:, :16401]):
        assert picked_config(row, matrix).block_r == 64  # B's rows 16 bytes apart
        assert_close("mm", mm(row, matrix), row.double() @ matrix.double(), 300)
    odd = seeded_randn(300, 16401, dtype=torch.float16, device=device)
    assert picked_config(row, odd).block_r == 16
    tall = seeded_randn(16400, 293, device=device)  # A, one column out: rows along N
    short = seeded_randn(293, 1, seed=1, device=device)
    assert picked_config(tall.t().contiguous().t(), short) == GemvConfig(128, 64, 4, 3)
    assert_close("mm", mm(tall.t().contiguous().t(), short), tall.double() @ short.double(), 293)
    assert gemv_config(19661, 9831, torch.bfloat16, k_contiguous=False).block_r == 32
    assert picked_config(row, wide_n) == GemvConfig(16, 128, 4, 3)
    assert_close("mm", mm(row, wide_n), row.double() @ wide_n.double(), 300)
    # one output column over a long K, and one output row, as GEMV (split)
    a, v = seeded_randn(70, 3000, device=device), seeded_randn(3000, 1, seed=1, device=device)
    assert picked_config(a, v) == gemv_config(70, 3000, torch.float32, k_contiguous=True)
    assert picked_config(v.t(), a.t()) == gemv_config(70, 3000, torch.float32, True)
    b_rows = seeded_randn(3000, 70, device=device)  # one row of A times a row-major B
    assert picked_config(v.t(), b_rows) == gemv_config(70, 3000, torch.float32, False)
    wide = seeded_randn(3000, 300, device=device)  # 300 outputs: one launch of 8x512 tiles
    assert picked_config(v.t(), wide) == GemvConfig(8, 512, 8, 3)
    assert_close("mm", mm(v.t(), wide), v.double().t() @ wide.double(), 3000)
    assert isinstance(picked_config(a, seeded_randn(3000, 2, device=device)), MMConfig)
    assert_close("mm", mm(a, v), a.double() @ v.double(), 3000)
    assert_close("mm", mm(v.t(), a.t()), v.double().t() @ a.double().t(), 3000)
    a, b = seeded_randn(3, 8, device=device), seeded_randn(8, 4, seed=1, device=device)
    with pytest.raises(ValueError, match="GemvConfig"):
        mm(a, b, config=GemvConfig(8, 16, 4, 1))


def test_one_row_times_a_wide_16bit_matrix_takes_the_kernel_its_rows_suit(
        device: torch.device) -> None:
    from flagbot.kernels.ops.mm import (
        ALONG_N_MIN_K,
        ALONG_N_NARROW,
        ALONG_N_TILES,
        ALONG_N_WIDE,
        row_times_wide_matrix,
    )

    f16 = torch.float16

    def b_of(k: int, n: int, stride: int | None = None) -> torch.Tensor:
        base = torch.empty((k, stride or n), dtype=f16, device=device)
        return base[:, :n]

    # rows on 16-byte starts, K from 2.5 times the outputs: 16x128 tiles, K split towards two
    # programs a multiprocessor
    tiled = row_times_wide_matrix(b_of(16384, 2048))
    assert isinstance(tiled, MMConfig) and (tiled.block_m, tiled.block_n) == (16, 128)
    assert tiled.split_k == 32 and not tiled.copy_unaligned  # 16 tiles
    # from ALONG_N_WIDE outputs: gemv_config's pick (1x16384x3433 bf16 ran faster on it)
    assert row_times_wide_matrix(b_of(4096, ALONG_N_WIDE)) is None
    long_k = torch.empty((41000, ALONG_N_WIDE - 8), dtype=f16, device="meta")  # 2.5x outputs
    assert row_times_wide_matrix(long_k).split_k > 1
    assert isinstance(row_times_wide_matrix(b_of(16384, 4095, stride=4096)), MMConfig)
    # ... a shorter K: the GEMV kernel, 32 outputs a program (its outputs' bound stated)
    assert row_times_wide_matrix(b_of(8192, 4408)) == GemvConfig(32, 512, 4, 3)
    assert row_times_wide_matrix(b_of(4096, 14336)) == GemvConfig(32, 512, 4, 3)
    assert row_times_wide_matrix(b_of(8192, 4095, stride=4096)) == GemvConfig(32, 512, 4, 3)
    # unaligned rows: 16-output GEMV programs, only in the span measured
    assert row_times_wide_matrix(b_of(4096, 4095)) == GemvConfig(16, 256, 8, 3)
    assert row_times_wide_matrix(b_of(4096, ALONG_N_NARROW[0])) == GemvConfig(16, 256, 8, 3)
    assert row_times_wide_matrix(b_of(1741, 12099)) is None
    assert row_times_wide_matrix(b_of(4096, 2047)) is None  # SMALL_GEMV's box keeps its rule
    assert row_times_wide_matrix(b_of(8192, ALONG_N_TILES - 8)) is None
    assert row_times_wide_matrix(b_of(ALONG_N_MIN_K - 1, 4408)) is None  # K outside the runs'
    assert row_times_wide_matrix(b_of(ALONG_N_MIN_K - 1, 4095)) is None
    # not for fp32, nor a matrix stored column by column
    assert row_times_wide_matrix(b_of(8192, 4408).float()) is None
    assert row_times_wide_matrix(b_of(4408, 8192).t()) is None
    v = seeded_randn(1, 16384, dtype=f16, device=device)
    assert picked_config(v, b_of(16384, 2048)) == tiled
    # one output column keeps gemv_config's pick
    assert picked_config(b_of(4408, 16384), v.t()) == gemv_config(4408, 16384, f16,
                                                                 k_contiguous=True)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize(("n", "k", "stride"), [(1032, 4133, 1032), (2049, 1030, 2049),
                                                (1040, 4101, 1047), (2056, 1030, 2056)])
def test_one_row_times_a_wide_matrix_on_either_kernel(n: int, k: int, stride: int,
                                                      dtype: torch.dtype,
                                                      device: torch.device) -> None:
    # The shapes of the rule's branches at their smallest (the tile kernel: aligned rows, 1032
    # outputs, K split with a tail; the GEMV kernel: 2049 unaligned outputs, and 2056 aligned
    # ones over a short K with a tail; a sliced matrix whose stride is odd), and the same
    # configurations forced in fp32, with A a slice.
    a = seeded_randn(3, k, dtype=dtype, device=device)[1:2]
    b = seeded_randn(k, stride, dtype=dtype, seed=1, device=device)[:, :n]
    want = a.double() @ b.double()
    if dtype == torch.float16:  # the path each shape is here for
        picked = picked_config(a, b)
        expected = {1032: "tiles", 2049: GemvConfig(16, 256, 8, 3), 1047: "gemv_config",
                    2056: GemvConfig(32, 512, 4, 3)}[stride]
        if expected == "tiles":
            assert isinstance(picked, MMConfig)
        elif expected == "gemv_config":
            assert picked == gemv_config(n, k, dtype, k_contiguous=False)
        else:
            assert picked == expected
    assert_close("mm", mm(a, b), want, k)
    for config in (MMConfig(16, 128, 64, 4, 4, split_k=5, copy_unaligned=False),
                   GemvConfig(16, 256, 8, 3)):
        assert_close("mm", mm(a, b, config=config), want, k)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("m", "n", "k"), [(70, 33, 19), (67, 45, 130), (65, 40, 24), (70, 33, 32),
                                         (20, 33, 130)])
@pytest.mark.parametrize("layout", ["contiguous", "a_t", "b_t"])
def test_mm_full_k_tiles_then_masked_tail(m: int, n: int, k: int, dtype: torch.dtype,
                                          layout: str, device: torch.device) -> None:
    # m > 64: operands with unaligned rows are padded, and the padded width bounds B's loads.
    a = seeded_randn(m, k, dtype=dtype, device=device)
    b = seeded_randn(k, n, dtype=dtype, seed=1, device=device)
    if layout == "a_t":
        a = a.t().contiguous().t()
    if layout == "b_t":
        b = b.t().contiguous().t()
    for config in (None, MMConfig(16, 32, 16, 4, 1), MMConfig(32, 16, 16, 4, 1, split_k=3)):
        assert_close("mm", mm(a, b, config=config), a.double() @ b.double(), k)


def test_operands_read_in_place_with_odd_rows_get_warps_enough_not_to_spill(
        device: torch.device) -> None:
    from flagbot.kernels.ops.mm import in_place_warps, mm_config

    f16 = torch.float16

    def picked(m: int, n: int, k: int, dtype: torch.dtype = f16) -> MMConfig:
        cfg = picked_config(torch.empty(m, k, dtype=dtype), torch.empty(k, n, dtype=dtype))
        assert isinstance(cfg, MMConfig)
        return cfg

    # K within one tile, small operands: B read in place, its rows 129 apart: 64x128x64 tiles
    # stage 64 elements a thread on 4 warps, 32 on 8; the 32x64 tiles such small products
    # take stage 48 on 4
    tile = MMConfig(64, 128, 64, 4, 4, copy_unaligned=False)
    odd_b = (torch.empty(511, 64, dtype=f16), torch.empty(64, 129, dtype=f16))
    assert in_place_warps(tile, *odd_b).warps == 8
    assert in_place_warps(tile, odd_b[0], torch.empty(64, 128, dtype=f16)).warps == 4  # 128
    assert picked(511, 129, 64) == MMConfig(32, 64, 64, 4, 4, copy_unaligned=False,
                                                 tma=True)
    assert in_place_warps(tile, odd_b[0], torch.empty(64, 130, dtype=f16)).warps == 4  # 4-byte
    assert picked(269, 129, 700).warps == 4  # copied to aligned rows first
    # up to 64 rows: A (K 543) and B (N 2047) both in place
    assert picked(55, 2047, 543).warps == 8
    assert picked(20, 2047, 543).warps == 4  # 16-row tiles (see the next test)
    assert picked(20, 2048, 543).warps == 4  # 32-row tiles: 48 elements a thread
    # fp32 stages 4-byte copies, but a masked K tail over both operands' odd rows spills on
    # 4 warps at 32x128x32 (fp32_tail_warps) where a wave or less of tiles leaves it unhidden;
    # B's rows aligned, K in whole tiles, or several waves of tiles: 4
    assert picked(55, 2047, 543, torch.float32).warps == 8
    assert picked(55, 2048, 543, torch.float32).warps == 4
    assert picked(55, 2047, 544, torch.float32).warps == 4
    assert picked(4224, 127, 23, torch.float32).warps == 8  # 132 tiles of 32x128
    assert picked(4256, 127, 23, torch.float32).warps == 4  # 133
    cfg = mm_config(55, 2047, 543, f16)
    assert in_place_warps(cfg, torch.empty(55, 543, dtype=f16).t().contiguous().t(),
                          torch.empty(543, 2047, dtype=f16)).warps == 8  # A by columns, 55 apart
    # the picked configurations compute what the kernel computes with them, 8 warps or 4
    for m, n, k in ((70, 33, 40), (40, 33, 45), (40, 32, 45)):
        a = seeded_randn(m, k, dtype=f16, device=device)
        b = seeded_randn(k, n, dtype=f16, seed=1, device=device)
        assert_close("mm", mm(a, b), a.double() @ b.double(), k)


def test_16bit_skinny_products_with_odd_b_rows_take_16_row_tiles(device: torch.device) -> None:
    from flagbot.kernels.ops.mm import SKINNY_ODD_B_ROWS16

    rows, max_k = SKINNY_ODD_B_ROWS16

    def block_m(m: int, n: int, k: int, dtype: torch.dtype = torch.float16,
                b_stride: int | None = None, a_columns: bool = False) -> int:
        b = torch.empty(k, b_stride or n, dtype=dtype)[:, :n]
        a = torch.empty(k, m, dtype=dtype).t() if a_columns else torch.empty(m, k, dtype=dtype)
        cfg = picked_config(a, b)
        assert isinstance(cfg, MMConfig)
        return cfg.block_m

    # B read in place with rows an odd number of elements apart: 16-row tiles up to `rows`
    # rows and K up to `max_k`
    assert block_m(17, 1631, 255, torch.bfloat16) == 16
    assert block_m(rows, 257, 168) == 16
    assert block_m(25, 1033, max_k) == 16
    assert block_m(25, 1033, max_k + 1) == 32  # a longer K, as measured:
    assert block_m(32, 4095, 8192, torch.bfloat16) == block_m(24, 513, 16384) == 32
    assert block_m(rows + 1, 257, 169) == 64  # A's rows odd too: see below
    assert block_m(25, 1032, 1277) == 32  # B's rows 8 elements apart
    assert block_m(25, 1033, 1277, b_stride=1040) == 32  # ... or stored so
    assert block_m(25, 1033, 1277, torch.float32) == 32  # fp32: 4-byte loads
    # from 33 to 64 rows: only A's rows on 16 bytes, stored row by row, and a grid of 64-row
    # tiles under a wave
    assert block_m(47, 4095, 624, torch.bfloat16) == block_m(64, 6287, 32) == 16
    assert block_m(55, 2047, 543) == 64  # A's rows odd
    assert block_m(48, 4095, 624, a_columns=True) == 64  # A by columns, 96 bytes apart
    assert block_m(64, 10831, 456) == 64  # 170 tiles of 64x64
    assert block_m(47, 4095, max_k + 8) == 64
    # the 16-row tiles compute what torch does, split or not, B's rows odd and A's rows odd
    for m, n, k in ((17, 33, 40), (25, 35, 72), (31, 17, 300), (37, 35, 64)):
        a = seeded_randn(m, k, dtype=torch.float16, device=device)
        b = seeded_randn(k, n, dtype=torch.float16, seed=1, device=device)
        assert block_m(m, n, k) == 16
        assert_close("mm", mm(a, b), a.double() @ b.double(), k)


def test_mm_tile_rules_split_small_grids_and_drop_the_k_tail_where_measured() -> None:
    from flagbot.kernels.ops.mm import _no_tail, mm_config

    bf16 = torch.bfloat16
    assert mm_config(73, 2047, 4096, bf16).split_k > 1  # 32 tiles: under half the SMs
    assert mm_config(1024, 1024, 1000, bf16).split_k == 1  # 128 tiles: no partial sums
    assert mm_config(4096, 4096, 4096, bf16).block_n == 256
    assert mm_config(1999, 1999, 999, bf16).block_m == 128
    a = torch.empty(128, 128, dtype=bf16)
    assert not _no_tail(a, a, 128, 64)  # row-major 16-bit keeps the tail
    assert _no_tail(a.t(), a, 128, 64) and _no_tail(a.float(), a.float(), 128, 32)
    assert not _no_tail(a.float(), a.float(), 100, 32)  # K does not divide: the tail is needed


def test_mm_split_rules_fill_the_device_for_few_tiles() -> None:
    from flagbot.kernels.ops.mm import NARROW_MIN_SPLIT_K, MMConfig, mm_config

    f16, f32 = torch.float16, torch.float32
    assert mm_config(64, 8192, 8192, f16).split_k == 2  # 128 tiles: split 2 measured best
    assert mm_config(37, 1607, 1560, f16).split_k > 4  # 13 tiles: far more programs
    assert mm_config(4, 449, 16384, torch.bfloat16).split_k == 32
    assert mm_config(256, 2049, 2048, f32).split_k == 4  # fp32, 66 tiles: under one wave
    assert mm_config(8192, 384, 2048, torch.bfloat16).block_m == 64  # under two waves
    # 16-bit, half a wave of 128x256 tiles from 1024 columns: those, unsplit, whatever K
    for m, n, k in ((1231, 2048, 1496), (3343, 1024, 16384), (419, 8192, 608)):
        assert mm_config(m, n, k, torch.bfloat16) == MMConfig(128, 256, 64, 8, 3)
    assert mm_config(1304, 3251, 787, torch.bfloat16).block_n == 128  # C's rows off 16 bytes
    assert mm_config(800, 2520, 2628, f16) == MMConfig(128, 256, 64, 8, 3)  # N % 8, not % 16
    assert mm_config(800, 2524, 2628, f16).block_n == 128  # N % 4: rows 8 bytes apart
    # ... and K of 33-64 over rows of SHORT_K_WIDE_N or more (the product is its output's
    # write); shorter K keeps 64x128
    assert mm_config(12437, 10672, 64, torch.bfloat16) == MMConfig(128, 256, 64, 8, 3)
    assert mm_config(12437, 10672, 32, torch.bfloat16).block_n == 128
    assert mm_config(4312, 1024, 64, torch.float16).block_n == 128  # narrower rows: 64x128
    assert mm_config(8192, 2047, 13, torch.bfloat16).block_n == 128
    assert mm_config(3001, 2999, 1023, torch.bfloat16).block_n == 128
    assert mm_config(1024, 1024, 1024, torch.bfloat16).block_n == 128  # 32 such tiles
    assert mm_config(2047, 1024, 8192, f16).block_n == 128  # 64: under half a wave
    assert mm_config(3343, 1024, 16384, f16, a_columns=True).block_n == 128
    # a K of a few tiles and a grid 64x64 tiles fill: those, unsplit
    assert mm_config(129, 2264, 1240, f16) == MMConfig(64, 64, 64, 4, 4)
    assert mm_config(129, 2264, NARROW_MIN_SPLIT_K, f16).split_k > 1
    # ... and a grid under FEW_TILES even at 64x64 over K under LONG_K: more than 32 tiles of
    # 32x64, unsplit; fewer, or a longer K, stay split
    assert mm_config(128, 1023, 1032, torch.bfloat16) == MMConfig(32, 64, 64, 4, 4)
    assert mm_config(128, 497, 1348, torch.bfloat16).split_k > 1
    assert mm_config(257, 383, 5043, f16).split_k > 1
    assert mm_config(2048, 929, 30, f16).block_k == 32  # the smallest K tile holding K
    assert mm_config(8192, 2047, 13, torch.bfloat16).block_k == 16  # large grids too
    assert mm_config(4, 32768, 432, f16).split_k == 1  # a wave of tiles: no partial sums
    assert mm_config(1288, 257, 637, torch.bfloat16).split_k == 1  # K too short to split
    assert mm_config(307, 2048, 6680, f32).block_m == 32  # fp32: 32x128 tiles ...
    assert mm_config(307, 2048, 6680, f32).split_k == 4  # ... up to 4 programs an SM
    assert mm_config(3557, 2048, 2344, torch.bfloat16).block_n == 256  # 2 waves, long K
    assert mm_config(4096, 4096, 4096, torch.bfloat16, a_columns=True).block_n == 128
    cols = mm_config(2161, 1025, 8160, f32, a_columns=True)  # fp32 A read down columns
    assert (cols.block_m, cols.block_n, cols.pad_k) == (128, 64, False)
    # ... K from 8192 over a wave of those tiles: 128x128 on 8 warps, split towards 4 an SM
    cols = mm_config(2161, 1025, 16384, f32, a_columns=True)
    assert (cols.block_m, cols.block_n, cols.warps, cols.split_k) == (128, 128, 8, 4)
    assert mm_config(513, 1025, 16384, f32, a_columns=True).block_n == 64  # 85 tiles
    # ... under 32 of them: 32x128 tiles split towards two programs an SM
    assert mm_config(80, 1024, 8191, f32, a_columns=True) == MMConfig(32, 128, 32, 4, 4,
                                                                       split_k=11)
    assert mm_config(587, 272, 1025, f32, a_columns=True).block_m == 32  # 25 tiles
    # ... and with K within one tile under two waves of them
    assert mm_config(12296, 79, 23, f32, a_columns=True) == MMConfig(32, 128, 32, 4, 4)
    for m, n, k in ((320, 1023, 1024), (128, 2048, 1024), (12296, 129, 23)):  # 48, 32, 291
        assert mm_config(m, n, k, f32, a_columns=True).block_m == 128
    # ... K off a tile over a grid of 64x64 tiles: both copied K-padded, split in two under a
    # wave; fewer tiles, or K within a tile, or 32 rows or fewer keep their tiles
    assert mm_config(2161, 1025, 16383, f32, a_columns=True) == MMConfig(64, 64, 32, 4, 4,
                                                                          pad_k=True)
    assert mm_config(511, 540, 2049, f32, a_columns=True) == MMConfig(64, 64, 32, 4, 4,
                                                                       split_k=2, pad_k=True)
    assert mm_config(63, 21557, 2131, f32, a_columns=True).pad_k
    for m, n, k in ((128, 457, 1061), (12296, 79, 23), (24, 8389, 607), (4096, 4096, 4096)):
        assert not mm_config(m, n, k, f32, a_columns=True).pad_k
    assert not mm_config(511, 540, 2049, f32).pad_k  # row-major fp32 keeps 32x128
    # row-major fp32 under LONG_K splits towards one wave in a power of two of parts
    assert mm_config(384, 461, 469, f32).split_k == 2  # 48 tiles: 3 parts rounded down
    # ... and from 64 such tiles up to 160, 32x64 tiles unsplit
    assert mm_config(512, 461, 469, f32) == MMConfig(32, 64, 32, 4, 4)
    assert mm_config(640, 1000, 1000, f32) == MMConfig(32, 64, 32, 4, 4)  # 160 tiles
    assert mm_config(672, 1000, 1000, f32).block_n == 128  # 168 tiles: kept
    assert mm_config(8192, 129, 712, f32).block_n == 128  # 512 tiles: kept
    assert mm_config(7314, 257, 17, f32).block_n == 128  # K within SHORT_K: kept
    assert mm_config(129, 431, 751, f32).split_k == 4
    assert mm_config(293, 513, 5347, f32).split_k == 11  # a long K: towards 2 programs an SM
    # a K of 8192 or more in whole tiles over 128-263 tiles of 128x64: those, split towards
    # about six programs a multiprocessor; fewer such tiles, or a K tail, keep 32x128
    assert mm_config(1072, 1024, 15584, f32) == MMConfig(128, 64, 32, 4, 4, split_k=4)
    assert mm_config(1025, 512, 16384, f32).block_m == 32  # 72 such tiles
    assert mm_config(1361, 848, 16383, f32).block_m == 32  # a K tail
    assert mm_config(4091, 1901, 16384, f32).block_m == 32  # 960 such tiles
    assert not mm_config(1184, 4096, 1048, f32, a_columns=True, unaligned=False).pad_k
    few_rows = mm_config(7, 27146, 2047, f32)  # a few fp32 rows: 16x128, split at a wave
    assert few_rows.block_n == 128 and few_rows.split_k == 2
    assert mm_config(2048, 8192, 1449, torch.bfloat16).block_n == 256  # ~4 waves, any K
    # 16-bit, up to 64 rows, under two waves of tiles: K split towards four programs an SM
    # where each part keeps SKINNY_PART_K of K and that splits finer than towards two
    assert mm_config(2, 8900, 5805, torch.float16).split_k == 4  # 140 tiles, else unsplit
    assert mm_config(32, 4095, 8192, torch.bfloat16).split_k == 8  # 64 tiles, else 5
    assert mm_config(7, 2049, 5557, torch.bfloat16).split_k == 8  # 5 parts of 1024 are fewer
    assert mm_config(19, 16384, 513, torch.bfloat16).split_k == 1  # 256 tiles, a short K
    assert mm_config(4, 32768, 432, torch.float16).split_k == 1  # two waves of tiles
    skinny = mm_config(8, 10703, 5537, torch.bfloat16)  # B read once, in place, 64 wide
    assert (skinny.block_n, skinny.copy_unaligned) == (64, False)
    assert mm_config(24, 8389, 607, f32, a_columns=True).block_n == 64
    assert not few_rows.copy_unaligned


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["contiguous", "b_t"])
def test_skinny_mm_reads_unaligned_rows_in_place(dtype: torch.dtype, layout: str,
                                                 device: torch.device) -> None:
    from flagbot.kernels.ops.mm import mm, mm_config

    m, n, k = 7, 83, 301  # B's rows (or columns) start off 16 bytes, K leaves a tail
    a = seeded_randn(m, k, dtype=dtype, device=device)
    b = seeded_randn(k, n, dtype=dtype, seed=1, device=device)
    if layout == "b_t":
        b = seeded_randn(n, k, dtype=dtype, seed=1, device=device).t()
    assert not mm_config(m, n, k, dtype).copy_unaligned
    assert_close("mm", mm(a, b), a.double() @ b.double(), k)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("m", "n", "k"), [(33, 40, 27), (70, 19, 45), (17, 33, 16)])
@pytest.mark.parametrize("layout", ["contiguous", "a_t", "b_t", "both_t"])
def test_mm_padded_k_copies(m: int, n: int, k: int, dtype: torch.dtype, layout: str,
                            device: torch.device) -> None:
    from flagbot.kernels.ops.mm import _pad_k

    a = seeded_randn(m, k, dtype=dtype, device=device)
    b = seeded_randn(k, n, dtype=dtype, seed=1, device=device)
    if layout in ("a_t", "both_t"):
        a = a.t().contiguous().t()
    if layout in ("b_t", "both_t"):
        b = b.t().contiguous().t()
    padded, width = _pad_k(a, 1, 48)
    assert padded.shape == (m, 48) and torch.equal(padded[:, :k], a)
    assert not padded[:, k:].any()  # zeros: 0 * NaN from an uninitialised pad would be NaN
    assert (padded.stride(0) == 1) == (a.stride(0) == 1) and width % 16 == 0
    for config in (MMConfig(16, 32, 16, 4, 1, pad_k=True),
                   MMConfig(32, 16, 16, 4, 1, split_k=2, pad_k=True)):
        assert_close("mm", mm(a, b, config=config), a.double() @ b.double(), k)


def test_mm_16bit_small_grids_over_a_short_k_take_narrow_tiles(device: torch.device) -> None:
    # K under SPLIT_MIN_K (too short to split) over fewer than 32 tiles of 64x128: 32x64
    from flagbot.kernels.ops.mm import mm_config

    f16 = torch.float16
    assert mm_config(180, 311, 888, f16) == MMConfig(32, 64, 64, 4, 4)
    assert mm_config(257, 499, 513, torch.bfloat16, a_columns=True) == MMConfig(32, 64, 64, 4, 4)
    assert mm_config(352, 1024, 700, f16) == MMConfig(64, 128, 64, 4, 4)  # 48 such tiles
    a = seeded_randn(65, 261, dtype=f16, device=device)
    b = seeded_randn(261, 129, dtype=f16, seed=1, device=device)
    picked = picked_config(a, b)
    assert (picked.block_m, picked.block_n, picked.split_k) == (32, 64, 1)
    assert_close("mm", mm(a, b), a.double() @ b.double(), 261)


def test_mm_16bit_small_grids_over_a_medium_k_take_narrow_tiles_unsplit(
        device: torch.device) -> None:
    # the smallest such product with rows off 16 bytes: 33 tiles of 32x64, K of 1025 (fp16:
    # the interpreter's bf16 products are wrong; bf16 picks the same tiles)
    from flagbot.kernels.ops.mm import picked_config

    a = seeded_randn(65, 1025, dtype=torch.float16, device=device)
    b = seeded_randn(1025, 641, dtype=torch.float16, seed=1, device=device)
    picked = picked_config(a, b)
    assert (picked.block_m, picked.block_n, picked.split_k) == (32, 64, 1)
    assert picked_config(a.bfloat16(), b.bfloat16()) == picked
    assert_close("mm", mm(a, b), a.double() @ b.double(), 1025)


def test_mm_fp32_long_k_rule_at_a_small_odd_shape(monkeypatch: pytest.MonkeyPatch,
                                                  device: torch.device) -> None:
    """The long-K fp32 rule's 128x64 split tiles, its thresholds scaled down to an interpreter
    sized product: 4 tiles of 128x64 over odd M and N, K in whole tiles, split in two."""
    from flagbot.kernels.ops import mm as mm_module

    for name, value in (("FP32_SPLIT_K", 64), ("FP32_SPLIT_TILES", 2),
                        ("FP32_SPLIT_PROGRAMS", 16), ("FP32_SPLIT_MIN_K", 32)):
        monkeypatch.setattr(mm_module, name, value)
    a = seeded_randn(130, 96, device=device)
    b = seeded_randn(96, 70, seed=1, device=device)
    assert mm_module.picked_config(a, b) == MMConfig(128, 64, 32, 4, 4, split_k=2)
    assert_close("mm", mm(a, b), a.double() @ b.double(), 96)


@pytest.mark.parametrize(("m", "n", "k", "layout", "expected"), [
    # A and B by columns, K off a tile, 64 tiles of 64x64: K-padded copies, split in two
    (33, 4033, 131, "both_t", MMConfig(64, 64, 32, 4, 4, split_k=2, pad_k=True)),
    # row-major, 6 tiles, a short K: 3 parts for a wave rounded down to 2
    (40, 257, 200, "contiguous", MMConfig(32, 128, 32, 4, 4, split_k=2)),
    # row-major, 72 tiles of 32x128, K of 67: 32x64 tiles unsplit
    (257, 897, 67, "contiguous", MMConfig(32, 64, 32, 4, 4)),
])
def test_mm_fp32_rules_at_small_odd_shapes(m: int, n: int, k: int, layout: str,
                                           expected: MMConfig, device: torch.device) -> None:
    from flagbot.kernels.ops.mm import picked_config

    a = seeded_randn(m, k, device=device)
    b = seeded_randn(k, n, seed=1, device=device)
    if layout == "both_t":
        a, b = a.t().contiguous().t(), b.t().contiguous().t()
    assert picked_config(a, b) == expected
    assert_close("mm", mm(a, b), a.double() @ b.double(), k)


@pytest.mark.parametrize(("m", "k", "padded"), [(1184, 1048, False), (1183, 1048, True),
                                                (1184, 1047, True)])
def test_mm_fp32_columns_are_copied_only_where_an_operand_is_off_16_bytes(
        m: int, k: int, padded: bool) -> None:
    from flagbot.kernels.ops.mm import picked_config

    # A and B by columns (their transposes stored row by row), shapes only: nothing runs
    a = torch.empty((k, m), device="meta").t()
    b = torch.empty((4096, k), device="meta").t()
    assert picked_config(a, b).pad_k == padded


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("m", "n", "k"), [(70, 33, 5), (67, 45, 30), (90, 17, 64)])
def test_mm_short_k_reads_unaligned_operands_in_place(m: int, n: int, k: int,
                                                      dtype: torch.dtype,
                                                      device: torch.device,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from flagbot.kernels.ops import mm as mm_module

    def no_copy(t: torch.Tensor) -> tuple[torch.Tensor, int]:
        raise AssertionError("K within one tile: operands are read in place")

    monkeypatch.setattr(mm_module, "_aligned", no_copy)
    a = seeded_randn(m, k + 3, dtype=dtype, device=device)[:, :k]  # rows 6-134 bytes apart
    b = seeded_randn(k, n, dtype=dtype, seed=1, device=device)
    assert_close("mm", mm(a, b), a.double() @ b.double(), k)
    for split in (1, 2):
        cfg = MMConfig(16, 32, 16, 4, 1, split_k=split)
        assert_close("mm", mm(a, b, config=cfg), a.double() @ b.double(), k)


def test_an_fp32_row_major_operand_read_a_few_times_is_not_copied() -> None:
    from flagbot.kernels.ops.mm import COPY_READS, LARGE_BY_COLUMNS, worth_copying

    def rows(r: int, c: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        return torch.empty_strided((r, c), (c + 1, 1), dtype=dtype, device="meta")

    def cols(r: int, c: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        return torch.empty_strided((r, c), (1, r + 1), dtype=dtype, device="meta")

    cfg = MMConfig(64, 128, 64, 4, 3)
    # 19x8978x4400: B read once (one row of 64-row tiles): in place; A never copied (<= 64 rows)
    assert worth_copying(rows(19, 4400), rows(4400, 8978), cfg) == (False, False)
    # 2048x256x4363: A read twice (two columns of 128-wide tiles), B 32 times
    assert worth_copying(rows(2048, 4363), rows(4363, 256), cfg) == (False, True)
    edge = 64 * COPY_READS
    assert worth_copying(rows(edge, 70), rows(70, 128 * COPY_READS), cfg) == (True, True)
    assert worth_copying(rows(edge - 64, 70), rows(70, 128 * (COPY_READS - 1)), cfg) == (
        False, False)
    # 16-bit operands and operands stored column by column stay copied however few the reads
    for dtype in (torch.float16, torch.bfloat16):
        assert worth_copying(rows(128, 8192, dtype), rows(8192, 4545, dtype), cfg) == (
            True, True)
    assert worth_copying(cols(108, 892), cols(892, 409), cfg) == (True, True)
    # ... except a large 16-bit one stored by columns, read fewer than COPY_READS times
    wide = cols(938, LARGE_BY_COLUMNS // 938 + 1, torch.bfloat16)
    assert worth_copying(cols(64 * (COPY_READS - 1), 938, torch.bfloat16), wide, cfg) == (
        True, False)
    assert worth_copying(cols(64 * COPY_READS, 938, torch.bfloat16), wide, cfg) == (True, True)
    assert worth_copying(rows(128, 938, torch.bfloat16),
                         rows(938, LARGE_BY_COLUMNS // 938 + 1, torch.bfloat16), cfg)[1]
    # 16-bit rows 8 bytes apart (a multiple of 4 elements) are read in place however often,
    # save by tiles over 64x128 reading them more than 2 * COPY_READS times
    def packed(r: int, c: int) -> torch.Tensor:
        return torch.empty((r, c), dtype=torch.bfloat16, device="meta")

    assert worth_copying(packed(800, 2628), packed(2628, 2521), cfg) == (False, True)
    big = MMConfig(128, 128, 64, 8, 3)
    assert worth_copying(packed(8192, 700), packed(700, 711), big) == (False, True)
    assert worth_copying(packed(2048, 1500), packed(1500, 2049), big) == (True, True)
    assert worth_copying(packed(2048, 1500), packed(1500, 128 * 2 * COPY_READS), big) == (
        False, True)


@pytest.fixture
def copied(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, ...]]:
    """The shapes of the operands mm() copies to aligned rows, in order, during the test."""
    from flagbot.kernels.ops import mm as mm_module

    shapes: list[tuple[int, ...]] = []
    real = mm_module._aligned

    def watched(t: torch.Tensor) -> tuple[torch.Tensor, int]:
        shapes.append(tuple(t.shape))
        return real(t)

    monkeypatch.setattr(mm_module, "_aligned", watched)
    return shapes


@pytest.mark.parametrize("dtype", DTYPES)
def test_mm_reads_fp32_rows_in_place_and_copies_the_rest(
        dtype: torch.dtype, device: torch.device, monkeypatch: pytest.MonkeyPatch,
        copied: list[tuple[int, ...]]) -> None:
    from flagbot.kernels.ops import mm as mm_module

    # 70x33 output in 32x32 tiles: A read twice, B three times; K 70 > SHORT_K; rows unaligned
    a = seeded_randn(70, 71, dtype=dtype, device=device)[:, :70]
    b = seeded_randn(70, 35, dtype=dtype, seed=1, device=device)[:, :33]
    assert_close("mm", mm(a, b, config=MMConfig(32, 32, 16, 4, 1)), a.double() @ b.double(), 70)
    assert copied == ([] if dtype == torch.float32 else [(70, 70), (70, 33)])
    copied.clear()
    # the same values with B stored column by column: copied in every dtype
    bt = torch.empty((33, 71), dtype=dtype, device=device)[:, :70].t()  # columns 71 apart
    bt.copy_(b)
    assert_close("mm", mm(a, bt, config=MMConfig(32, 32, 16, 4, 1)), a.double() @ b.double(),
                 70)
    assert (70, 33) in copied
    copied.clear()
    # ... unless it is a large 16-bit one read fewer than COPY_READS times (the bound lowered
    # here: B read three times by 32-row tiles)
    monkeypatch.setattr(mm_module, "LARGE_BY_COLUMNS", bt.numel())
    assert_close("mm", mm(a, bt, config=MMConfig(32, 32, 16, 4, 1)), a.double() @ b.double(),
                 70)
    assert (70, 33) in copied if dtype == torch.float32 else (70, 33) not in copied


def test_mm_reads_16bit_rows_8_bytes_apart_in_place(
        device: torch.device, copied: list[tuple[int, ...]]) -> None:
    # A's rows 260 fp16 apart (8-byte loads): read in place; B's 33 apart: copied
    a = seeded_randn(70, 260, dtype=torch.float16, device=device)
    b = seeded_randn(260, 33, dtype=torch.float16, seed=1, device=device)
    assert_close("mm", mm(a, b), a.double() @ b.double(), 260)
    assert copied == [(260, 33)]


def test_fp32_gemv_rows_along_n_on_16_bytes_over_a_long_k_take_256_a_step(
        device: torch.device) -> None:
    long_k = GemvConfig(32, 256, 4, 3)
    assert gemv_config(6544, 2048, torch.float32, False, rows_aligned=True) == long_k
    assert gemv_config(8192, 5158, torch.float32, False, rows_aligned=True) == long_k
    # a shorter K, rows off 16 bytes, 16-bit, 16384 outputs or more: as before
    assert gemv_config(6544, 2047, torch.float32, False, rows_aligned=True).block_k == 128
    assert gemv_config(8193, 4830, torch.float32, False, rows_aligned=False).block_k == 128
    assert gemv_config(6544, 2048, torch.bfloat16, False, rows_aligned=True).block_k == 128
    assert gemv_config(16384, 4096, torch.float32, False, rows_aligned=True).block_k == 128
    row = seeded_randn(1, 2048, device=device)
    matrix = seeded_randn(2048, 4100, seed=1, device=device)
    assert picked_config(row, matrix) == long_k
    assert_close("mm", mm(row, matrix), row.double() @ matrix.double(), 2048)
    assert picked_config(row, matrix[:, :4099]) == long_k  # a slice: rows still 4100 apart
    assert picked_config(row, seeded_randn(2048, 4099, device=device)).block_k == 128


def test_small_16bit_products_with_even_steps_read_both_operands_in_place(
        device: torch.device, copied: list[tuple[int, ...]]) -> None:
    def by_columns(m: int, n: int, k: int, dtype: torch.dtype) -> tuple[torch.Tensor, ...]:
        a = seeded_randn(k, m, dtype=dtype, device=device).t()
        return a, seeded_randn(n, k, dtype=dtype, seed=1, device=device).t()

    # both operands stored by columns, steps 108 and 892 (8-byte loads): no copy, no
    # descriptors, 32x64 tiles on the pointer kernel (fp16: the interpreter computes bf16
    # products wrongly)
    a, b = by_columns(108, 409, 892, torch.float16)
    cfg = picked_config(a, b)
    assert (cfg.block_m, cfg.block_n, cfg.copy_unaligned, cfg.tma) == (32, 64, False, False)
    assert_close("mm", mm(a, b), a.double() @ b.double(), 892)
    assert copied == []
    # A's step 166 (4-byte loads), B's on 16 bytes
    assert not picked_config(*by_columns(166, 919, 1176, torch.bfloat16)).copy_unaligned
    # an odd step anywhere keeps the copies and the descriptors: 2-byte loads lost 2x
    for m, n, k, dtype in ((257, 499, 513, torch.bfloat16), (400, 511, 1741, torch.float16),
                           (166, 919, 1175, torch.bfloat16), (257, 499, 512, torch.bfloat16)):
        cfg = picked_config(*by_columns(m, n, k, dtype))
        assert (cfg.block_m, cfg.block_n, cfg.copy_unaligned, cfg.tma) == (32, 64, True, True)
    # even steps on larger tiles keep them too
    cfg = picked_config(*by_columns(1026, 1030, 2050, torch.float16))
    assert cfg.block_m * cfg.block_n > 32 * 64 and cfg.copy_unaligned and cfg.tma
    # rows stored row by row, A's 1069 apart
    a = seeded_randn(1025, 1069, dtype=torch.bfloat16, device=device)
    assert picked_config(a, seeded_randn(1069, 129, dtype=torch.bfloat16, device=device)).tma


def test_mm_very_long_k_tiles_split_towards_a_wave(device: torch.device) -> None:
    from flagbot.kernels.ops.mm import MMConfig, mm_config

    # 12 and 16 tiles of 128x256 split 8 ways, 64 of them 2 ways; fewer tiles, K of 8192 or
    # A read down its columns keep their earlier picks
    for (m, n, k), split in (((336, 1024, 16384), 8), ((937, 364, 16384), 8),
                             ((2047, 1024, 16384), 2)):
        assert mm_config(m, n, k, torch.float16) == MMConfig(128, 256, 64, 8, 3, split_k=split)
    for m, n, k in ((488, 368, 16384), (128, 4545, 8192)):
        assert mm_config(m, n, k, torch.float16).block_n == 128
    assert mm_config(336, 1024, 16384, torch.float16, a_columns=True).block_n != 256
    # the launch itself at a small odd shape: 128x256 tiles, K split 8 ways with a tail
    a = seeded_randn(130, 1030, dtype=torch.float16, device=device)
    b = seeded_randn(1030, 257, dtype=torch.float16, seed=1, device=device)
    assert_close("mm", mm(a, b, config=MMConfig(128, 256, 64, 8, 3, split_k=8)),
                 a.double() @ b.double(), 1030)


def test_mm_strides_multiple_of_8_but_not_16(device: torch.device) -> None:
    # K = 24 fp16: rows start on 16 bytes without being a multiple of 16 elements, the stride
    # alignment the kernel states itself (no copy is made).
    a = seeded_randn(80, 24, dtype=torch.float16, device=device)
    b = seeded_randn(24, 40, dtype=torch.float16, seed=1, device=device)
    assert_close("mm", mm(a, b, config=MMConfig(32, 32, 16, 4, 1)), a.double() @ b.double(), 24)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn", [softmax, log_softmax], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize(("m", "n"), [(3, 1001), (1, 200), (5, 97)])
def test_softmax_few_long_rows_split_across_programs(m: int, n: int, dtype: torch.dtype,
                                                     fn: object, device: torch.device) -> None:
    assert _rows_split.split_chunks(m, n, 16) < n  # the split path is the one taken
    x = (seeded_randn(m, n, device=device) * 4).to(dtype)
    ref = torch.softmax if fn is softmax else torch.log_softmax
    assert_close("softmax", fn(x, -1, max_row_block=16), ref(x.double(), -1), n)  # type: ignore[operator]


@pytest.mark.parametrize("fn", [softmax, log_softmax], ids=["softmax", "log_softmax"])
def test_softmax_few_columns_down_a_long_dim_copies_then_runs_rows(
        fn: object, monkeypatch: pytest.MonkeyPatch, device: torch.device) -> None:
    from flagbot.kernels.ops import _rows

    # the real thresholds: 1024 rows, 8192 elements
    monkeypatch.setattr(_rows, "LONG_COLUMNS", 16)
    monkeypatch.setattr(_rows, "COPY_MIN_ELEMENTS", 0)
    monkeypatch.setattr(_rows, "_softmax_cols_kernel", None)  # taken, it would fail
    x = seeded_randn(40, 5, device=device).t()  # softmax along dim -1 walks a stride-5 dim
    ref = torch.softmax if fn is softmax else torch.log_softmax
    for dim in (-1, 0):
        out = fn(x, dim, max_row_block=16)  # type: ignore[operator]
        assert_close("softmax", out, ref(x.double(), dim), x.shape[dim])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("shape", "dim"), [((7, 3, 33), 1), ((2, 5, 9), 1), ((4, 2, 5, 3), 1),
                                            ((3, 31, 5), 1)])
def test_short_reduced_dim_walks_rows_per_output(shape: tuple[int, ...], dim: int,
                                                 dtype: torch.dtype,
                                                 device: torch.device) -> None:
    assert shape[dim] <= _reduce.SHORT_R
    x = seeded_randn(*shape, dtype=dtype, device=device)
    for mean in (False, True):
        expected = (torch.mean if mean else torch.sum)(x.double(), dim)
        assert_close("mean" if mean else "sum", reduce_dim(x, [dim], False, mean, None), expected,
               shape[dim])


def test_short_dim_blocks_leave_enough_programs_to_hide_latency(
        device: torch.device, monkeypatch: pytest.MonkeyPatch) -> None:
    # 51x32x3466 over dim 1: 176766 outputs in 128-output programs, 1381 of them
    assert _reduce.short_block(51 * 3466) == 128
    assert _reduce.short_block(2048 * 240) == 256
    assert _reduce.short_block(1223 * 1884) == _reduce.SHORT_BLOCK  # many outputs: widest
    assert _reduce.short_block(1) == 128
    spy = spy_on(monkeypatch, _reduce, "_sum_short_kernel")
    x = seeded_randn(3, 5, 300, device=device)
    assert_close("sum", reduce_dim(x, [1], False, False, None), x.double().sum(1), 5)
    (grid, _, kwargs), = spy.launches
    assert kwargs["BLOCK"] == _reduce.short_block(900) == 128 and grid == (8,)


def test_random_shapes_are_seeded_bounded_and_cover_their_classes() -> None:
    for op in random_shapes.SUPPORTED:
        cases = random_shapes.draw(op, 200, 11)
        assert cases == random_shapes.draw(op, 200, 11)
        assert cases != random_shapes.draw(op, 200, 12)
        for case in cases:
            assert numel(case.shape) >= 1
            if op == "mm":
                m, n, k = case.shape
                assert m * n * k <= random_shapes.MAX_MACS
            else:
                assert numel(case.shape) <= random_shapes.MAX_ELEMENTS
    mm_cases = random_shapes.draw("mm", 200, 11)
    assert any(1 in c.shape[:2] for c in mm_cases)  # GEMV
    assert any(c.shape[2] <= 64 for c in mm_cases)  # small K
    assert any(700 <= c.shape[2] <= 1500 and c.shape[0] % 2 for c in mm_cases)  # odd, K ~ 1000
    rows = random_shapes.draw("softmax", 200, 11)
    assert any(c.shape[-1] in random_shapes.VOCABS for c in rows)
    assert any(c.shape[-1] > 262144 for c in rows)  # very long rows
    assert any(c.params.get("dim") == 0 for c in rows)
    sums = random_shapes.draw("sum", 200, 11)
    assert {c.params["dim"] for c in sums} >= {0, 1, 2}
    sizes = [n for c in random_shapes.draw("add", 200, 11) for n in c.shape]
    assert any(random_shapes._is_prime(n) and n > 1000 for n in sizes)
    assert any((n + 1) & n == 0 or (n - 1) & (n - 2) == 0 for n in sizes if n > 4)
    layouts = {r.layout for r in random_shapes.draw_rows("mm", 200, 11)}
    assert layouts == {"contiguous", "t", "slice"}


def test_shapes_random_plumbing_gives_seeded_cases(capsys: pytest.CaptureFixture[str]) -> None:
    args = cli._parser().parse_args(["check", "--backend", "b", "--shapes", "random:7",
                                     "--seed", "5"])
    options = cli._options(args)
    assert isinstance(options, CheckOptions)
    assert options.shapes == "random:7:5"
    assert OPS["mm"].cases("random:7:5") == random_shapes.draw("mm", 7, 5)
    assert "seed 5" in capsys.readouterr().err
    # no seed: a new one, printed, so the run can be repeated
    args = cli._parser().parse_args(["check", "--backend", "b", "--shapes", "random"])
    options = cli._options(args)
    assert isinstance(options, CheckOptions)
    shapes = options.shapes
    seed = shapes.split(":")[2]
    assert shapes.startswith(f"random:{random_shapes.DEFAULT_COUNT}:")
    assert f"--seed {seed}" in capsys.readouterr().err
    # an op with no random distribution keeps its full cases
    assert OPS["addmm"].cases("random:3:1") == OPS["addmm"].full_cases


@pytest.mark.parametrize("argv", [["--shapes", "random:0"], ["--shapes", "random:x"],
                                  ["--shapes", "big"], ["--shapes", "ci", "--seed", "3"]])
def test_shapes_random_refuses_bad_values(argv: list[str]) -> None:
    args = cli._parser().parse_args(["check", "--backend", "b", *argv])
    with pytest.raises(ValueError, match="--s"):
        cli._options(args)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("shape", "width"), [((29, 300), 257), ((3, 5, 70), 33), ((7, 100), 99)])
def test_sliced_rows_are_reduced_in_place(shape: tuple[int, ...], width: int, dtype: torch.dtype,
                                          device: torch.device,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    def no_copy(t: torch.Tensor) -> None:
        raise AssertionError("sliced rows are read in place")

    monkeypatch.setattr(_reduce, "as_contiguous_permutation", no_copy)
    x = seeded_randn(*shape, dtype=dtype, device=device)[..., :width]
    assert not x.is_contiguous()
    for mean in (False, True):
        for splits in (None, 3):
            expected = (torch.mean if mean else torch.sum)(x.double(), -1, keepdim=True)
            got = reduce_dim(x, [-1], True, mean, None, splits=splits)
            assert_close("mean" if mean else "sum", got, expected, width)



@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("shape", "width", "dim"), [((5, 7, 40), 33, 0), ((5, 7, 40), 33, 1),
                                                     ((40, 3, 20), 17, 1), ((37, 30), 19, 0),
                                                     ((3, 4, 5, 30), 29, 2)])
def test_sliced_inputs_are_reduced_in_place_over_earlier_dims(
        shape: tuple[int, ...], width: int, dim: int, dtype: torch.dtype, device: torch.device,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # a slice of wider rows reduced over an earlier dim: the kept dims are read through their
    # strides (outer slices, reduced rows), never copied to contiguous first
    def no_copy(t: torch.Tensor) -> None:
        raise AssertionError("sliced inputs are read in place")

    monkeypatch.setattr(_reduce, "as_contiguous_permutation", no_copy)
    x = seeded_randn(*shape, dtype=dtype, device=device)[..., 1:width + 1]
    assert _reduce.lines(x, dim) is not None
    for mean in (False, True):
        for splits in (None, 2):
            expected = (torch.mean if mean else torch.sum)(x.double(), dim)
            got = reduce_dim(x, [dim], False, mean, None, splits=splits)
            assert_close("mean" if mean else "sum", got, expected, shape[dim])


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_small_column_reduction_is_one_launch(dtype: torch.dtype, device: torch.device,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    spy = spy_on(monkeypatch, _reduce, "_sum_cols_kernel")
    # 2081x7 over dim 0 (one program of columns) and 257x2x13: small, one launch, the tile
    # deep enough for few steps; 3000x7 is over ONE_LAUNCH_ELEMENTS: split, then summed
    for shape, launches in (((2081, 7), 1), ((257, 2, 13), 1), ((3000, 7), 2)):
        x = seeded_randn(*shape, dtype=dtype, device=device)
        for mean in (False, True):
            spy.launches.clear()
            got = reduce_dim(x, [0], False, mean, None)
            expected = (torch.mean if mean else torch.sum)(x.double(), 0)
            assert_close("mean" if mean else "sum", got, expected, shape[0])
            assert len(spy.launches) == launches, (shape, spy.launches)
            if launches == 1:
                (grid, _, kwargs), = spy.launches
                assert grid[1] == 1 and kwargs["BLOCK_R"] * kwargs["BLOCK_I"] >= 2048


@pytest.mark.parametrize("dtype", DTYPES)
def test_one_launch_over_two_columns_2048_deep_takes_16_warps_in_fp32(
        dtype: torch.dtype, device: torch.device, monkeypatch: pytest.MonkeyPatch) -> None:
    spy = spy_on(monkeypatch, _reduce, "_sum_cols_kernel")
    # 1025-2048 rows over 1-2 columns: one 2048-deep tile; 2049 rows take a 4096-deep one and
    # 1024 a 1024-deep one, which keep 4 warps, as do 16-bit inputs
    for rows, depth in ((2048, 2048), (1500, 2048), (2049, 4096), (1024, 1024)):
        x = seeded_randn(rows, 2, dtype=dtype, device=device)
        spy.launches.clear()
        got = reduce_dim(x, [0], False, True, None)
        assert_close("mean", got, torch.mean(x.double(), 0), rows)
        (_, _, kwargs), = spy.launches
        assert kwargs["BLOCK_R"] == depth
        wide = depth == 2048 and dtype == torch.float32
        assert kwargs["num_warps"] == (16 if wide else 4), (rows, dtype, kwargs)


@pytest.mark.parametrize("dtype", DTYPES)
def test_one_or_two_reduced_rows_over_many_columns_take_1024_element_tiles_on_4_warps(
        dtype: torch.dtype, device: torch.device, monkeypatch: pytest.MonkeyPatch) -> None:
    spy = spy_on(monkeypatch, _reduce, "_sum_cols_kernel")
    # one row: up to 1024 columns a program; two over 65536 columns or more: 2x512; two over
    # fewer columns, and three, keep 2x128 and 4x128 on 8 warps
    for rows, cols, tile in ((1, 3000, (1, 1024, 4)), (1, 300, (1, 512, 4)),
                             (2, 70000, (2, 512, 4)), (2, 60000, (2, 128, 8)),
                             (3, 70000, (4, 128, 8))):
        x = seeded_randn(rows, cols, dtype=dtype, device=device)
        spy.launches.clear()
        assert_close("sum", reduce_dim(x, [0], False, False, None), torch.sum(x.double(), 0),
                     rows)
        (_, _, kwargs), = spy.launches
        assert (kwargs["BLOCK_R"], kwargs["BLOCK_I"], kwargs["num_warps"]) == tile, (rows, cols)
    # two rows already on 1024 columns (enough programs) keep them, on 8 warps
    assert _reduce.cols_tile(1, 2, 33554432) == (1024, 1, 8)


def test_lines_refuse_what_cannot_be_read_in_place() -> None:
    x = torch.zeros(6, 8, 10)
    assert _reduce.lines(x, 1) == (6, 80, 10)
    assert _reduce.lines(x, 0) == (1, 0, 80)
    assert _reduce.lines(x[:, :, :7], 0) == (8, 10, 7)
    assert _reduce.lines(x, 2) is None  # the reduced dim is the contiguous one
    assert _reduce.lines(x[:, ::2, :7], 0) == (4, 20, 7)
    assert _reduce.lines(x[::2, :, :7], 1) == (3, 160, 7)
    assert _reduce.lines(x[:, :5, :7], 1) == (6, 80, 7)
    assert _reduce.lines(x[:, :5, :7], 2) is None
    assert _reduce.lines(x.permute(2, 0, 1), 0) is None  # kept dims not contiguous at the end


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("shape", "dim", "config"), [
    ((37, 45), 0, _reduce.ReduceConfig(4, 32, 2)), ((5, 70, 3), 1, _reduce.ReduceConfig(8, 4, 1)),
    ((29, 71), 1, _reduce.ReduceConfig(32, 2, 1)), ((19, 33), 1, _reduce.ReduceConfig(64, 1, 4))])
def test_reduction_tiles_can_be_forced(shape: tuple[int, ...], dim: int,
                                       config: _reduce.ReduceConfig, dtype: torch.dtype,
                                       device: torch.device) -> None:
    # a benchmark's forced tile (rows per program, columns, a tile shorter than the dim) sums
    # exactly what the picked one does
    x = seeded_randn(*shape, dtype=dtype, device=device)
    for mean in (False, True):
        expected = (torch.mean if mean else torch.sum)(x.double(), dim)
        got = reduce_dim(x, [dim], False, mean, None, config=config)
        assert_close("mean" if mean else "sum", got, expected, shape[dim])


def test_reduction_and_softmax_tiles_follow_the_measured_rules() -> None:
    # few rows over millions of columns: wide tiles, one row deep; a long reduced dim: 32
    # columns, deep enough that no split is needed; a short one: 128 columns at least; 16
    # columns or fewer: all of them (the H100 sweeps' and tile runs' picks)
    assert _reduce.cols_tile(1, 5, 16384 * 513) == (1024, 1, 8)
    assert _reduce.cols_tile(1, 4097, 4097) == (32, 16, 8)
    assert _reduce.cols_tile(1, 3, 100000) == (128, 4, 8)
    assert _reduce.cols_tile(1, 2, 100000) == (512, 2, 4)  # two rows: FEW_ROWS_TILE elements
    assert _reduce.cols_tile(512, 127, 1024) == (256, 2, 8)
    assert _reduce.cols_tile(1, 9581360, 2) == (2, 2048, 4)
    assert _reduce.cols_tile(1, 100003, 3) == (4, 256, 16)  # 3-16 columns: shallow, 16 warps
    assert _reduce.cols_tile(1, 100, 11) == (16, 128, 16)
    assert _reduce.cols_tile(12408, 226, 10) == (16, 256, 4)  # many slices: deep, as before
    assert _reduce.rows_tile(1024, 128) == (4, 2)  # rows of 64-256: small tiles
    assert _reduce.rows_tile(200, 128) == (1, 1)  # ... and programs first
    assert _reduce.rows_tile(5120, 32) == (128, 8)  # shorter rows: 4096 elements
    assert _reduce.rows_tile(132468, 512) == (8, 8)  # longer rows too
    assert _reduce.rows_tile(4096, 1) == (64, 2)  # few rows of 1-4: 64 elements a program
    assert _reduce.rows_tile(2048, 2) == (32, 2)
    assert _reduce.rows_tile(100000, 2) == (128, 2)  # ... as many programs as wanted
    assert _reduce.rows_tile(5544 * 1177, 4) == (1024, 8)  # millions of rows: 4096 elements
    assert _rows.softmax_rows_config(153582, 256) == _rows.RowsConfig(4, 2)
    assert _rows.softmax_rows_config(168284, 8) == _rows.RowsConfig(32, 4)
    assert _rows.softmax_rows_config(300, 64) == _rows.RowsConfig(1, 1)  # programs first
    assert _rows.softmax_rows_config(262144, 64) == _rows.RowsConfig(8, 1)  # rows of 33-64
    assert _rows.softmax_rows_config(65535, 64) == _rows.RowsConfig(8, 1)
    # ... with fewer rows a program where 8 would leave under ~16 warps a multiprocessor
    assert _rows.softmax_rows_config(13799, 64) == _rows.RowsConfig(4, 1)
    assert _rows.softmax_rows_config(5000, 64) == _rows.RowsConfig(2, 1)
    assert _rows.softmax_rows_config(24472, 32) == _rows.RowsConfig(8, 2)  # rows of 17-32
    assert _rows.softmax_rows_config(2047, 128) == _rows.RowsConfig(2, 2)  # 528 programs
    assert _rows.softmax_rows_config(65536, 128) == _rows.RowsConfig(8, 2)
    # one program a row from SPLIT_MAX_ROWS rows: no split, whatever the row length
    assert _rows_split.split_chunks(_rows_split.SPLIT_MAX_ROWS, 1 << 20) == 1 << 20
    assert _rows_split.split_chunks(_rows_split.SPLIT_MAX_ROWS - 1, 1 << 20) < 1 << 20
    assert _rows.softmax_rows_config(4096, 4096) == _rows.RowsConfig(1, 8)  # long: as before


@pytest.mark.parametrize("dtype", DTYPES)
def test_wide_column_tiles_sum_exactly(dtype: torch.dtype, device: torch.device) -> None:
    # the 1024-column tile of few-row reductions, at a size the interpreter can run: a partial
    # last tile and rows past the reduced dim masked
    x = seeded_randn(3, 1500, dtype=dtype, device=device)
    for mean in (False, True):
        got = reduce_dim(x, [0], False, mean, None, config=_reduce.ReduceConfig(1, 1024, 8))
        assert_close("mean" if mean else "sum", got,
                     (torch.mean if mean else torch.sum)(x.double(), 0), 3)


def test_expanded_inputs_reduce_like_torch(device: torch.device) -> None:
    # a broadcast view (stride 0) reduced over its repeated dim or beside it: read in place
    # where the kept dims allow it, copied otherwise, the sum torch gives either way
    base = seeded_randn(5, 1, 3, device=device)
    x = base.expand(5, 7, 3)
    for dim in range(3):
        for mean in (False, True):
            expected = (torch.mean if mean else torch.sum)(x.double(), dim)
            assert_close("mean" if mean else "sum", reduce_dim(x, [dim], False, mean, None),
                         expected, x.shape[dim])


def test_16_bit_gelu_launch_follows_its_size(monkeypatch: pytest.MonkeyPatch,
                                             device: torch.device) -> None:
    # short 16-bit GELU kernels take 8 elements a thread, large ones 16 (erf's arithmetic is
    # hidden by more independent elements per thread only when there is throughput to win)
    from flagbot.kernels.ops import gelu as gelu_module

    assert gelu_module.block_16(4096) == (2048, 8)
    assert gelu_module.block_16(1 << 24) == (2048, 4)
    seen: list[tuple[int, int]] = []
    real = gelu_module.pointwise

    def spy(op: str, xs: list[torch.Tensor], **kw: object) -> torch.Tensor:
        seen.append(kw["block_16"])  # type: ignore[arg-type]
        return real(op, xs, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(gelu_module, "pointwise", spy)
    x = seeded_randn(37, 5, dtype=torch.float16, device=device)
    out = gelu_module.gelu(x)
    assert seen == [(2048, 8)]
    assert_close("gelu", out, torch.nn.functional.gelu(x.double()), 1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("shape", "dim"), [((1000, 3), 0), ((5000, 5), 0), ((300, 11), 0),
                                            ((999, 1), 1), ((999, 2), 1), ((37, 3), -1)])
def test_narrow_columns_and_tiny_rows_sum_exactly(shape: tuple[int, ...], dim: int,
                                                  dtype: torch.dtype,
                                                  device: torch.device) -> None:
    # 3-16 columns: the shallow 16-warp tile (split over programs for 5000 rows); rows of 1-4
    # elements: 64 elements a program
    x = seeded_randn(*shape, dtype=dtype, device=device)
    for mean in (False, True):
        want = x.double().mean(dim) if mean else x.double().sum(dim)
        assert_close("sum", reduce_dim(x, [dim], False, mean, None), want, shape[dim])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn", [softmax, log_softmax], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize(("m", "n"), [(300, 33), (61, 20), (531, 100)])
def test_softmax_narrow_rows(m: int, n: int, dtype: torch.dtype, fn: object,
                             device: torch.device) -> None:
    x = (seeded_randn(m, n, device=device) * 4).to(dtype)
    ref = torch.softmax if fn is softmax else torch.log_softmax
    assert_close("softmax", fn(x, -1), ref(x.double(), -1), n)  # type: ignore[operator]


@pytest.mark.parametrize("fn", [softmax, log_softmax], ids=["softmax", "log_softmax"])
def test_softmax_many_long_rows_one_program_each(fn: object, device: torch.device) -> None:
    m, n = _rows_split.SPLIT_MAX_ROWS, 40
    assert _rows_split.split_chunks(m, n, 16) == n  # not split: the looped kernel
    x = seeded_randn(m, n, device=device) * 4
    ref = torch.softmax if fn is softmax else torch.log_softmax
    assert_close("softmax", fn(x, -1, max_row_block=16), ref(x.double(), -1), n)  # type: ignore[operator]


@pytest.mark.parametrize("fn", [softmax, log_softmax], ids=["softmax", "log_softmax"])
def test_long_rows_opening_with_a_masked_tile(fn: object, device: torch.device) -> None:
    # the looped kernel's first tile all -inf (an attention row masked at its start): the
    # running sum stays 0 instead of exp(-inf - -inf) = NaN
    m = _rows_split.SPLIT_MAX_ROWS
    x = seeded_randn(m, 41, device=device) * 4
    x[:, :20] = -float("inf")
    want = (torch.softmax if fn is softmax else torch.log_softmax)(x.double(), -1)
    got = fn(x, -1, max_row_block=16)  # type: ignore[operator]
    finite = torch.isfinite(want)
    assert torch.equal(torch.isfinite(got), finite)
    assert_close("softmax", got[finite], want[finite], 41)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize(("shape", "width", "splits"), [((3, 65537), 65537, None),
                                                        ((2, 65539), 65544, None),
                                                        ((3, 90001), 90001, 2)])
def test_long_16bit_rows_off_16_bytes_are_summed_through_aligned_windows(
        shape: tuple[int, int], width: int, splits: int | None, dtype: torch.dtype,
        monkeypatch: pytest.MonkeyPatch, device: torch.device) -> None:
    from flagbot.kernels.ops import _sum_window

    # rows of 65537 (odd: every row starts elsewhere; whole 4096-element tiles between the
    # masked first and last), a slice of rows 65544 apart, and rows of 90001 split in parts
    # (each part's start off 16 bytes too); one program a row
    spy = spy_on(monkeypatch, _sum_window, "_sum_window_kernel")
    x = seeded_randn(shape[0], width, dtype=dtype, device=device)[:, : shape[1]]
    for mean in (False, True):
        want = (torch.mean if mean else torch.sum)(x.double(), 1)
        got = reduce_dim(x, [1], False, mean, None, splits=splits)
        assert_close("mean" if mean else "sum", got, want, shape[1])
    assert len(spy.launches) == 2
    if splits:
        (grid, _, _), _ = spy.launches
        assert grid[1] > 1


def test_row_sums_take_windows_only_for_16bit_rows_off_16_bytes(
        monkeypatch: pytest.MonkeyPatch, device: torch.device) -> None:
    from flagbot.kernels.ops import _sum_window
    from flagbot.kernels.ops._sum_window import WINDOW_MIN_ROW

    spy = spy_on(monkeypatch, _sum_window, "_sum_window_kernel")
    for x in (seeded_randn(3, WINDOW_MIN_ROW + 1, device=device),  # fp32
              seeded_randn(3, WINDOW_MIN_ROW + 8, dtype=torch.float16, device=device),  # 8s
              seeded_randn(3, 5001, dtype=torch.float16, device=device),  # too short
              seeded_randn(300, 33, dtype=torch.float16, device=device)):  # many short rows
        assert_close("sum", reduce_dim(x, [1], False, False, None), x.double().sum(1),
                     x.shape[1])
    assert spy.launches == []


@pytest.fixture
def strided_launches(monkeypatch: pytest.MonkeyPatch) -> LaunchSpy:
    from flagbot.kernels.ops import _pointwise

    return spy_on(monkeypatch, _pointwise, "_strided_kernel")


@pytest.mark.parametrize("shape, width", [((300, 8), 11), ((9, 37), 50), ((2048, 2), 3)])
@pytest.mark.parametrize("op", ["gelu", "add"])
def test_small_strided_grids_take_shorter_tiles_exactly(shape: tuple[int, int], width: int,
                                                        op: str, device: torch.device,
                                                        strided_launches: LaunchSpy) -> None:
    from flagbot.kernels.ops import _pointwise
    from flagbot.kernels.ops.add import add
    from flagbot.kernels.ops.gelu import gelu

    # rows sliced out of wider ones: the strided kernel, with a grid under FEW_PROGRAMS
    # programs at whole tiles, so its tiles are cut to more, shorter ones (masked edges)
    assert shape[0] * shape[1] < _pointwise.TILE * _pointwise.FEW_PROGRAMS
    x = seeded_randn(shape[0], width, device=device)[:, :shape[1]]
    y = seeded_randn(shape[0], width, seed=3, device=device)[:, :shape[1]]
    got = gelu(x) if op == "gelu" else add(x, y)
    want = torch.nn.functional.gelu(x) if op == "gelu" else x + y
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    (grid, _, kwargs), = strided_launches.launches
    tile = kwargs["BLOCK_R"] * kwargs["BLOCK_C"]
    assert tile < _pointwise.TILE and tile >= min(_pointwise.SMALL_TILE, kwargs["BLOCK_C"])
    whole_tiles = -(-shape[0] // max(1, _pointwise.TILE // kwargs["BLOCK_C"]))
    assert grid[0] > whole_tiles  # more programs than 4096-element tiles would give


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", ["t", "t3", "both", "broadcast_t"])
def test_strided_output_follows_the_dense_operands_layout(case: str, dtype: torch.dtype,
                                                           device: torch.device,
                                                           strided_launches: LaunchSpy) -> None:
    from flagbot.kernels.ops.add import add
    from flagbot.kernels.ops.mul import mul

    # Each case: a permuted dense operand against a broadcast one, so the strided kernel runs;
    # torch lays the output out as that operand, and the kernel should walk it that way.
    if case == "t":
        x, y = seeded_randn(37, 19, dtype=dtype, device=device).t(), seeded_randn(
            37, dtype=dtype, seed=1, device=device)
    elif case == "t3":
        x = seeded_randn(3, 11, 6, dtype=dtype, device=device).permute(2, 0, 1)
        y = seeded_randn(3, 1, dtype=dtype, seed=1, device=device)
    elif case == "both":
        x = seeded_randn(5, 13, dtype=dtype, device=device).t()
        y = seeded_randn(13, 5, dtype=dtype, seed=1, device=device)  # row-major: x decides
    else:
        x = seeded_randn(1, 23, dtype=dtype, device=device).expand(9, 23)
        y = seeded_randn(23, 9, dtype=dtype, seed=1, device=device).t()  # y covers the output
    for fn, ref in ((add, torch.add), (mul, torch.mul)):
        strided_launches.launches.clear()
        got, want = fn(x, y), ref(x, y)
        assert got.stride() == want.stride(), (case, got.stride(), want.stride())
        torch.testing.assert_close(got, want)
        (_, args, _), = strided_launches.launches
        dense = y if case == "broadcast_t" else x
        # the innermost dim the kernel walks (its column stride, argument 9 for x, 12 for y)
        # is the dense operand's contiguous one
        assert args[9 if dense is x else 12] == 1, (case, args[6:13])


@pytest.mark.parametrize("layout", ["contiguous", "t"])
def test_small_16bit_products_over_a_short_k_read_unaligned_operands_in_place(
        layout: str, device: torch.device, monkeypatch: pytest.MonkeyPatch) -> None:
    from flagbot.kernels.ops import mm as mm_module
    from flagbot.kernels.ops.mm import SMALL_OPERANDS, SMALL_PRODUCT_K, mm_config

    f16 = torch.float16
    # more than 64 rows, K of 33 to three tiles, small operands: 32x64 tiles, nothing copied
    assert mm_config(79, 289, 127, f16) == MMConfig(32, 64, 64, 4, 4, copy_unaligned=False)
    assert mm_config(79, 289, SMALL_PRODUCT_K + 1, f16).copy_unaligned
    assert mm_config(79, 289, 32, f16).block_n == 128  # K within half a tile: the output's write
    assert mm_config(79, SMALL_OPERANDS // 127, 127, f16).copy_unaligned  # large operands
    assert mm_config(79, 289, 127, torch.float32).block_n != 64  # fp32 keeps its tiles
    copied: list[tuple[int, ...]] = []
    real = mm_module._aligned
    monkeypatch.setattr(mm_module, "_aligned",
                        lambda t: copied.append(tuple(t.shape)) or real(t))
    # rows (or columns) an odd number of elements apart, K a full tile and a masked tail
    a = seeded_randn(67, 131, dtype=f16, device=device)
    b = seeded_randn(131, 37, dtype=f16, seed=1, device=device)
    if layout == "t":
        a, b = a.t().contiguous().t(), b.t().contiguous().t()
    assert_close("mm", mm(a, b), a.double() @ b.double(), 131)
    assert copied == []


@pytest.mark.parametrize(("m", "n", "vector", "launch"), [
    (2032, 21, 2, _rows.RowsConfig(4, 4)),  # 128 rows a program would launch 16 programs
    (65536, 21, 2, _rows.RowsConfig(128, 8)),  # programs enough: rows share the 4096 tile
    (1024, 256, 16, _rows.RowsConfig(16, 8)),  # 16-byte vectors keep 16 rows a program
    (1024, 256, 4, _rows.RowsConfig(2, 4)),  # narrower accesses: 512 programs
    (263, 4097, 2, _rows.RowsConfig(1, 16)),  # under two rows a multiprocessor: whole rows
    (264, 4096, 2, _rows.RowsConfig(1, 8)),
    (264, 4097, 2, _rows.LoopConfig(1024, 16)),  # many rows over 4096: small looped tiles
    (264, 4097, 8, _rows.RowsConfig(1, 16)),  # ... unless read in 8-byte vectors or wider
    (306, 48437, 2, _rows.LoopConfig(1024, 16)),
    (306, 48440, 16, _rows.LoopConfig(8192, 16)),
    (50, 48437, 2, _rows.LoopConfig(8192, 16)),  # few long rows (the caller may split them)
])
def test_norm_launch_by_row_count_length_and_alignment(
        m: int, n: int, vector: int, launch: _rows.RowsConfig | _rows.LoopConfig) -> None:
    assert _rows.norm_launch(m, n, vector) == launch


@pytest.mark.parametrize(("n", "rows"), [(16, 256), (12, 1)])
def test_norm_rows_share_a_program_by_their_alignment(n: int, rows: int,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      device: torch.device) -> None:
    import torch.nn.functional as F

    from flagbot.kernels.ops.layer_norm import layer_norm

    # fp16 rows of 16 are read in 16-byte vectors and keep 256 rows a program; rows of 12 allow
    # 8-byte accesses only, and take one row a program to launch 300 programs
    whole_rows = spy_on(monkeypatch, _rows, "_norm_rows_kernel")
    x = seeded_randn(300, n, device=device).to(torch.float16)
    assert_close("layer_norm", layer_norm(x, (n,)), F.layer_norm(x.double(), (n,)), n)
    assert [(grid, kw["ROWS"]) for grid, _, kw in whole_rows.launches] == [
        ((300 // rows + (300 % rows > 0),), rows)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_many_rows_over_4096_are_normalised_in_small_looped_tiles(
        dtype: torch.dtype, monkeypatch: pytest.MonkeyPatch, device: torch.device) -> None:
    import torch.nn.functional as F

    from flagbot.kernels.ops.layer_norm import layer_norm
    from flagbot.kernels.ops.rms_norm import rms_norm

    # rows of 4097 (read an element an access): four full 1024-element tiles and one holding
    # a single element
    long_rows = spy_on(monkeypatch, _rows, "_norm_long_kernel")
    whole_rows = spy_on(monkeypatch, _rows, "_norm_rows_kernel")
    m, n = _rows.MANY_ROWS, 4097
    x = (seeded_randn(m, n, device=device) + 3).to(dtype)
    w = seeded_randn(n, seed=1, device=device).to(dtype)
    b = seeded_randn(n, seed=2, device=device).to(dtype)
    xd, wd, bd = x.double(), w.double(), b.double()
    assert_close("layer_norm", layer_norm(x, (n,), w, b), F.layer_norm(xd, (n,), wd, bd), n)
    assert_close("rms_norm", rms_norm(x, (n,), w, 1e-6), F.rms_norm(xd, (n,), wd, 1e-6), n)
    assert whole_rows.launches == []
    assert [(grid, kw["BLOCK_N"], kw["num_warps"]) for grid, _, kw in long_rows.launches] == [
        ((m,), 1024, 16)] * 2


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("m", "n", "stride"), [(3, 131, 131), (1, 257, 257), (5, 130, 141)])
def test_few_long_rows_are_normalised_in_chunks_that_programs_share(
        m: int, n: int, stride: int, dtype: torch.dtype, monkeypatch: pytest.MonkeyPatch,
        device: torch.device) -> None:
    import torch.nn.functional as F

    from flagbot.kernels.ops import _norm_split
    from flagbot.kernels.ops.layer_norm import layer_norm
    from flagbot.kernels.ops.rms_norm import rms_norm

    # 16-element tiles (max_row_block): rows of 131 (a last partial tile and a chunk that
    # holds only part of one), one row of 257, and rows 141 apart (a slice); an offset mean
    # of 5, so that the chunks' shifted sums must not cancel
    stats = spy_on(monkeypatch, _norm_split, "_norm_chunk_stats_kernel")
    long_rows = spy_on(monkeypatch, _rows, "_norm_long_kernel")
    x = (seeded_randn(m, stride, device=device) + 5).to(dtype)[:, :n]
    w = seeded_randn(n, seed=1, device=device).to(dtype)
    b = seeded_randn(n, seed=2, device=device).to(dtype)
    xd, wd, bd = x.double(), w.double(), b.double()
    assert_close("layer_norm", layer_norm(x, (n,), w, b, max_row_block=16),
                 F.layer_norm(xd, (n,), wd, bd), n)
    assert_close("layer_norm", layer_norm(x, (n,), max_row_block=16), F.layer_norm(xd, (n,)), n)
    assert_close("rms_norm", rms_norm(x, (n,), w, 1e-6, max_row_block=16),
                 F.rms_norm(xd, (n,), wd, 1e-6), n)
    assert len(stats.launches) == 3 and long_rows.launches == []
    (grid, _, _) = stats.launches[0]
    assert grid[0] == m and grid[1] > 1  # several chunks a row


@pytest.mark.parametrize(("dtype", "rms_splits"), [(torch.float16, False), (torch.float32, True)])
def test_rms_norm_splits_only_rows_over_its_byte_bound(
        dtype: torch.dtype, rms_splits: bool, monkeypatch: pytest.MonkeyPatch,
        device: torch.device) -> None:
    import torch.nn.functional as F

    from flagbot.kernels.ops import _norm_split
    from flagbot.kernels.ops.layer_norm import layer_norm
    from flagbot.kernels.ops.rms_norm import rms_norm

    # rows of 49 over 16-element tiles (four of them: enough to split): 98 bytes in fp16, 196
    # in fp32, either side of RMS_SPLIT_BYTES scaled to the 16-element tile (100 bytes)
    assert 98 < _rows.RMS_SPLIT_BYTES * 16 // _rows.MAX_ROW_BLOCK < 196
    stats = spy_on(monkeypatch, _norm_split, "_norm_chunk_stats_kernel")
    long_rows = spy_on(monkeypatch, _rows, "_norm_long_kernel")
    x = (seeded_randn(3, 49, device=device) + 5).to(dtype)
    w = seeded_randn(49, seed=1, device=device).to(dtype)
    assert_close("rms_norm", rms_norm(x, (49,), w, 1e-6, max_row_block=16),
                 F.rms_norm(x.double(), (49,), w.double(), 1e-6), 49)
    assert (len(stats.launches), len(long_rows.launches)) == ((1, 0) if rms_splits else (0, 1))
    assert_close("layer_norm", layer_norm(x, (49,), max_row_block=16),
                 F.layer_norm(x.double(), (49,)), 49)
    assert len(stats.launches) == (2 if rms_splits else 1)  # layer_norm splits either way


def test_norm_rows_keep_one_program_each_where_splitting_would_not_pay(
        monkeypatch: pytest.MonkeyPatch, device: torch.device) -> None:
    from flagbot.kernels.ops import _norm_split
    from flagbot.kernels.ops.layer_norm import layer_norm

    stats = spy_on(monkeypatch, _norm_split, "_norm_chunk_stats_kernel")
    for x in (seeded_randn(_rows_split.SPLIT_MAX_ROWS, 131, device=device),  # rows enough
              seeded_randn(3, 40, device=device)):  # under MIN_CHUNK_TILES tiles a chunk
        got = layer_norm(x, (x.shape[1],), max_row_block=16)
        assert_close("layer_norm", got, torch.nn.functional.layer_norm(
            x.double(), (x.shape[1],)), x.shape[1])
    assert stats.launches == []
