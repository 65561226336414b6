"""benchmarks/bench_mm_tiles.py off the GPU: every configuration of its grid computes the right
product (interpreted kernels), a shape is timed through the device's own module, and the
shapes come from a real results file. The sweep itself needs an accelerator."""

from __future__ import annotations

from dataclasses import replace
from types import ModuleType

import pytest
import torch

from flagbot.kernels.ops.mm import mm
from flagbot.kernels.spec import Case

from .benchmarks_support import BENCHMARKS, load_benchmark
from .closeness import assert_close, seeded_randn
from .standin import cpu_only, forbid_cuda, standin_device


@pytest.fixture(scope="module")
def tiles() -> ModuleType:
    return load_benchmark("bench_mm_tiles")


def test_the_grid_fits_the_product(tiles: ModuleType) -> None:
    big = tiles.grid(4096, 4096, 4095, torch.bfloat16)
    assert any(c.block_n == 256 for c in big) and any(c.pad_k for c in big)
    assert all(c.split_k == 1 for c in big)  # 1024 tiles: nothing to split
    skinny = tiles.grid(5, 300, 16384, torch.float32)
    assert all(c.block_m <= 16 for c in skinny) and max(c.split_k for c in skinny) == 32
    # fp32 K steps of 32, and of 16 (half the registers a split operand takes) unsplit only
    assert {c.block_k for c in skinny} == {16, 32}
    assert all(c.split_k == 1 for c in skinny if c.block_k == 16)
    assert tiles.grid(3, 5, 7, torch.float16)  # nothing fits: the shape-picked one stands in
    assert len({tiles.label(c) for c in big}) == len(big)
    # 16-bit rows off 16 bytes (K = 4095): also read in place; aligned or fp32: copies only
    assert any(not c.copy_unaligned for c in big)
    assert all(c.copy_unaligned for c in tiles.grid(4096, 4096, 4096, torch.bfloat16))
    assert all(c.copy_unaligned for c in tiles.grid(4096, 4096, 4095, torch.float32))
    # 16-bit tiles of every shape also through tensor descriptors, split up to two ways, as
    # mm's pick loads them; fp32 never
    assert {c.block_m for c in big if c.tma} == {c.block_m for c in big}
    assert all(c.split_k <= 2 for c in big if c.tma)
    assert not any(c.tma for c in tiles.grid(4096, 4096, 4095, torch.float32))
    # unsplit ones also by persistent programs, each beside its one-program-a-tile twin
    persistent = [c for c in big if c.persistent]
    assert persistent and all(c.tma and c.split_k == 1 for c in persistent)
    assert all(replace(c, persistent=False) in big for c in persistent)
    assert any(c.warps == 8 and c.block_m == 32 for c in tiles.grid(256, 999, 4096, torch.float32))


@cpu_only
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_every_config_of_a_small_grid_is_exact(tiles: ModuleType, dtype: torch.dtype) -> None:
    m, n, k = 20, 70, 300  # K leaves a tail and splits; partial row and column tiles
    a = seeded_randn(m, k, dtype=dtype)
    b = seeded_randn(k, n, dtype=dtype, seed=1)
    configs = tiles.grid(m, n, k, dtype)
    assert any(c.pad_k for c in configs) and any(c.split_k > 1 for c in configs)
    for cfg in configs:
        assert_close("mm", mm(a, b, config=cfg), a.double() @ b.double(), k)


@cpu_only
def test_the_skinny_grid_reads_unaligned_rows_both_ways_exactly(tiles: ModuleType) -> None:
    m, n, k = 5, 70, 300  # B's rows of 70 fp16 start on 4 bytes, not 16
    a = seeded_randn(m, k, dtype=torch.float16)
    b = seeded_randn(k, n, dtype=torch.float16, seed=2)
    configs = tiles.skinny_grid(m, n, k, torch.float16)
    assert {c.copy_unaligned for c in configs} == {True, False}
    assert all(c.block_m == 16 for c in configs) and any(c.split_k > 1 for c in configs)
    assert any(c.tma for c in configs)  # also through descriptors, as mm's pick loads them
    assert len({tiles.label(c) for c in configs}) == len(configs)
    for cfg in configs:
        assert_close("mm", mm(a, b, config=cfg), a.double() @ b.double(), k)


@cpu_only
def test_the_skinny_grid_copies_an_fp32_a_stored_by_columns_exactly(tiles: ModuleType) -> None:
    m, n, k = 9, 70, 301  # A read down its columns, K odd
    a = seeded_randn(k, m, seed=4).t()
    b = seeded_randn(k, n, seed=5)
    configs = tiles.skinny_grid(m, n, k, torch.float32)
    assert any(c.a_rows for c in configs) and not any(
        c.a_rows for c in tiles.skinny_grid(m, n, k, torch.float16))
    assert any(t.endswith("/arows") for t in map(tiles.label, configs))
    for cfg in configs:
        assert_close("mm", mm(a, b, config=cfg), a.double() @ b.double(), k)


@cpu_only
def test_a_shape_is_timed_through_the_device_module(tiles: ModuleType,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    called = forbid_cuda(monkeypatch)
    r = tiles.time_shape(Case((20, 70, 45)), torch.float32, "t", standin_device())
    assert called == []
    assert {"torch", "picked", r["best"]} <= set(r["us"]) and r["best"] != "picked"
    assert r["vs_torch_best"] > 0 and r["picked_config"].startswith(("16x", "32x", "64x"))


def test_shapes_come_from_a_results_file_and_the_command_line(tiles: ModuleType) -> None:
    results = BENCHMARKS / "results" / "kernels-h100-2026-11-26.json.gz"
    picked = tiles.from_results(results, 0.5, 10)
    assert 1 <= len(picked) <= 10
    assert all(isinstance(c, Case) and len(c.shape) == 3 for c, _, _ in picked)
    assert tiles.parse_shape("33x40x24:float16:t") == (Case((33, 40, 24)), torch.float16, "t")
    assert tiles.guards() and all(len(c.shape) == 3 for c, _, _ in tiles.guards())


@cpu_only
def test_without_an_accelerator_it_exits_2(tiles: ModuleType,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert tiles.main(["--shapes", "8x8x8"]) == 2
    assert "needs an accelerator" in capsys.readouterr().err


@cpu_only
@pytest.mark.parametrize("rows_along_k", [False, True])
def test_every_config_of_the_gemv_grid_is_exact(tiles: ModuleType, rows_along_k: bool) -> None:
    m, n, k = 1, 45, 300  # one row of A; 45 outputs leave partial blocks, K splits
    a = seeded_randn(m, k, seed=6)
    b = seeded_randn(n, k, seed=7).t() if rows_along_k else seeded_randn(k, n, seed=7)
    configs = tiles.gemv_grid(m, n, k, torch.float32)
    assert all(isinstance(c, tiles.GemvConfig) for c in configs)
    assert all(1024 <= c.block_r * c.block_k <= 16384 for c in configs)
    assert {c.split_k for c in configs} > {1} and {c.block_r for c in configs} >= {2, 256}
    assert {c.block_k for c in configs} >= {32, 2048}
    assert len({tiles.label(c) for c in configs}) == len(configs)
    for cfg in configs:
        assert_close("mm", mm(a, b, config=cfg), a.double() @ b.double(), k)


def test_the_gemv_grid_takes_only_matrix_vector_shapes(tiles: ModuleType) -> None:
    results = BENCHMARKS / "results" / "kernels-h100-2026-11-27-rules4.json.gz"
    gemv = tiles.from_results(results, 0.95, 10, gemv=True)
    other = tiles.from_results(results, 0.95, 10)
    assert gemv and all(tiles.is_gemv(c) for c, _, _ in gemv)
    assert other and not any(tiles.is_gemv(c) for c, _, _ in other)
    assert tiles.guards(gemv=True) and all(tiles.is_gemv(c) for c, _, _ in tiles.guards(True))
    assert tiles.label(tiles.GemvConfig(32, 256, 4, 3, split_k=4)) == "gemv32x256/w4s3/k4"
