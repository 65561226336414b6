"""mm's persistent kernels (_mm_tma.mm_tma_persistent through descriptors, and the pointer
kernel's _mm_persistent_kernel for one K step): resident programs that each take output tiles
one after another, at small odd shapes on the interpreter (or a GPU); the rules that pick them
(mm.persistent_pays, mm.one_step_persistent_pays); and how many programs they launch
(_resident)."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
import torch

from flagbot.kernels.ops import _mm_tma, _resident
from flagbot.kernels.ops import mm as mm_module
from flagbot.kernels.ops.mm import MMConfig, mm, persistent_pays, picked_config

from .closeness import assert_close, seeded_randn

F16 = torch.float16
Grids = list[tuple[int, ...]]


def watch_grids(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> Grids:
    """The grid of each launch of jit kernel `name` of `module` from here to the test's end."""
    grids: list[tuple[int, ...]] = []
    real = getattr(module, name)

    class Watched:
        def __getitem__(self, grid: tuple[int, ...]) -> Any:
            grids.append(grid)
            return real[grid]

    monkeypatch.setattr(module, name, Watched())
    return grids


@pytest.fixture
def persistent_grids(monkeypatch: pytest.MonkeyPatch,
                     device: torch.device) -> Iterator[Grids]:
    """The grid of each launch of the persistent descriptor kernel during the test."""
    if not _mm_tma.target_has_tma():
        pytest.skip(f"{device}: Triton's target has no tensor descriptors")
    grids = watch_grids(monkeypatch, _mm_tma, "_mm_tma_persistent_kernel")
    _resident.clear()
    yield grids
    _resident.clear()


def _operand(rows: int, cols: int, by_columns: bool, seed: int, device: torch.device
             ) -> torch.Tensor:
    t = seeded_randn(rows, cols, dtype=F16, seed=seed, device=device)
    return t.t().contiguous().t() if by_columns else t


@pytest.mark.parametrize(("a_cols", "b_cols"), [(False, False), (True, True)], ids=["nn", "tt"])
def test_programs_loop_over_more_tiles_than_they_are(
        a_cols: bool, b_cols: bool, device: torch.device, persistent_grids: Grids) -> None:
    # 16x32 tiles over 72x80: 5 x 3 = 15 tiles with tails on M, N and K (200 = 3 x 64 + 8),
    # taken by fewer programs than tiles (one per multiprocessor the target reports, 4 on the
    # interpreter), so every program computes and stores several tiles
    a = _operand(72, 200, a_cols, 0, device)
    b = _operand(200, 80, b_cols, 1, device)
    cfg = MMConfig(16, 32, 64, 4, 2, tma=True, persistent=True)
    expected = a.double() @ b.double()
    assert_close("mm", mm(a, b, config=cfg), expected, 200)
    assert_close("mm", mm(a, b, config=cfg), expected, 200)  # its learnt grid, once more
    programs = _resident.multiprocessors(a.device)
    assert persistent_grids[0] == (min(15, programs),)
    assert all(g[0] <= 15 for g in persistent_grids) and len(persistent_grids) == 2


def test_odd_operands_are_copied_then_looped_over(device: torch.device,
                                                  persistent_grids: Grids) -> None:
    # every dim odd: both operands copied to rows on 16 bytes, described, then tiled
    a = seeded_randn(67, 131, dtype=F16, device=device)
    b = seeded_randn(131, 45, dtype=F16, seed=1, device=device)
    cfg = MMConfig(16, 16, 32, 4, 2, tma=True, persistent=True)
    assert_close("mm", mm(a, b, config=cfg), a.double() @ b.double(), 131)
    assert len(persistent_grids) == 1


def test_a_split_product_keeps_the_split_kernel(device: torch.device,
                                                persistent_grids: Grids) -> None:
    a = seeded_randn(40, 256, dtype=F16, device=device)
    b = seeded_randn(256, 48, dtype=F16, seed=1, device=device)
    cfg = MMConfig(32, 32, 64, 4, 2, split_k=2, tma=True, persistent=True)
    assert_close("mm", mm(a, b, config=cfg), a.double() @ b.double(), 256)
    assert persistent_grids == []


def test_picked_where_the_rule_says(monkeypatch: pytest.MonkeyPatch, device: torch.device,
                                    persistent_grids: Grids) -> None:
    # the rule's tile threshold lowered so that a product the interpreter can run takes it
    monkeypatch.setattr(mm_module, "PERSISTENT_MIN_TILES", 2)
    a = seeded_randn(150, 72, dtype=F16, device=device)
    b = seeded_randn(72, 136, dtype=F16, seed=1, device=device)
    cfg = picked_config(a, b)
    assert isinstance(cfg, MMConfig) and cfg.tma and cfg.persistent and cfg.split_k == 1
    assert_close("mm", mm(a, b), a.double() @ b.double(), 72)
    assert len(persistent_grids) == 1


def _meta(m: int, n: int, k: int, *, a_cols: bool = False, b_cols: bool = False
          ) -> tuple[torch.Tensor, torch.Tensor]:
    a = torch.empty((k, m) if a_cols else (m, k), dtype=torch.bfloat16, device="meta")
    b = torch.empty((n, k) if b_cols else (k, n), dtype=torch.bfloat16, device="meta")
    return (a.t() if a_cols else a), (b.t() if b_cols else b)


def test_the_rule() -> None:
    wide, mid, square = MMConfig(128, 256, 64, 8, 3), MMConfig(64, 128, 64, 4, 4), \
        MMConfig(128, 128, 64, 8, 3)
    many = _meta(4096, 8192, 512)  # 32 x 32 tiles of 128x256
    assert persistent_pays(wide, *many) and persistent_pays(mid, *many)
    assert not persistent_pays(square, *many)  # no gain at 128x128
    assert not persistent_pays(MMConfig(128, 256, 64, 8, 3, split_k=2), *many)
    assert not persistent_pays(wide, *_meta(4096, 8191, 512))  # C's rows off 16 bytes
    assert not persistent_pays(wide, *_meta(4096, 8192, 512, a_cols=True))
    assert not persistent_pays(wide, *_meta(4096, 8192, 512, b_cols=True))
    assert not persistent_pays(wide, *_meta(1024, 4096, 512))  # 8 x 16 tiles: one wave
    assert persistent_pays(wide, *_meta(1152, 4096, 512))  # 9 x 16: more than one
    assert persistent_pays(wide, *_meta(4096, 8192, 4096))
    assert not persistent_pays(wide, *_meta(4096, 8192, 4097))  # a K this long gains nothing
    picked = picked_config(*_meta(12437, 10672, 64))
    assert isinstance(picked, MMConfig) and picked.persistent
    assert not picked_config(*_meta(12437, 10672, 64, b_cols=True)).persistent  # type: ignore[union-attr]


def test_resident_programs_from_what_the_compiler_reports() -> None:
    props = {"max_num_regs": 65536, "max_shared_mem": 232448, "multiprocessor_count": 132}

    def compiled(warps: int, regs: int, shared: int) -> Any:
        return SimpleNamespace(n_regs=regs, metadata=SimpleNamespace(num_warps=warps,
                                                                     shared=shared))

    # 8 warps of 164 registers (rounded to 168): 65536 // (168 x 256) = 1
    assert _resident.per_processor(compiled(8, 164, 160_000), props) == 1
    # 4 warps of 90 registers: 5 by registers, 2 by 98 KB of shared memory
    assert _resident.per_processor(compiled(4, 90, 98_304), props) == 2
    # 4 warps of 48 registers, no shared memory: 65536 // (48 x 128) = 10
    assert _resident.per_processor(compiled(4, 48, 0), props) == 10
    # 1 warp of 16 registers: 128 by registers, but 2048 threads hold 64 such programs
    assert _resident.per_processor(compiled(1, 16, 0), props) == 64
    assert _resident.per_processor(None, props) == 1  # no compiled kernel handed back
    assert _resident.per_processor(compiled(4, 48, 0), {}) == 1  # a device that says nothing


def test_learnt_counts_are_per_kernel_and_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    _resident.clear()
    cpu = torch.device("cpu")
    monkeypatch.setattr(_resident, "_properties",
                        lambda index: {"multiprocessor_count": 10, "max_num_regs": 65536,
                                       "max_shared_mem": 232448})
    small = SimpleNamespace(n_regs=48, metadata=SimpleNamespace(num_warps=4, shared=49_152))
    assert _resident.programs(cpu, "k1") == 10
    _resident.learn(cpu, "k1", small)
    assert _resident.programs(cpu, "k1") == 40 and _resident.programs(cpu, "k2") == 10
    _resident.learn(cpu, "k1", None)  # learnt once; a later launch changes nothing
    assert _resident.programs(cpu, "k1") == 40
    monkeypatch.setattr(_resident, "MAX_KERNELS", 1)
    _resident.learn(cpu, "k2", small)
    assert _resident.programs(cpu, "k2") == 10  # past the bound: one per multiprocessor
    _resident.clear()


@pytest.mark.parametrize("k", [13, 16, 1], ids=["masked", "whole-tile", "one"])
@pytest.mark.parametrize("dtype", [torch.float32, F16])
@pytest.mark.parametrize("transposed", [False, True], ids=["rows", "columns"])
def test_the_pointer_kernel_loops_over_tiles_too(k: int, dtype: torch.dtype, transposed: bool,
                                                 device: torch.device,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # 16x32 tiles over 70x130 (5 x 5 tiles, tails on M and N), K within one 16-wide step
    # (masked at 13), by at most one program per multiprocessor the target reports
    _resident.clear()
    grids = watch_grids(monkeypatch, mm_module, "_mm_persistent_kernel")
    a = seeded_randn(70, k, dtype=dtype, device=device)
    b = seeded_randn(k, 130, dtype=dtype, seed=1, device=device)
    if transposed:
        a, b = a.t().contiguous().t(), b.t().contiguous().t()
    cfg = MMConfig(16, 32, 16, 4, 2, persistent=True, copy_unaligned=False)
    assert_close("mm", mm(a, b, config=cfg), a.double() @ b.double(), k)
    assert grids == [(min(25, _resident.multiprocessors(a.device)),)]
    _resident.clear()


def test_a_k_loop_keeps_the_split_grid_kernel(device: torch.device,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # resident programs are compiled for one K step only: a longer K asked for persistent
    # still runs (and is right) on the split-grid kernel
    grids = watch_grids(monkeypatch, mm_module, "_mm_persistent_kernel")
    a = seeded_randn(70, 50, device=device)
    b = seeded_randn(50, 130, seed=1, device=device)
    cfg = MMConfig(16, 32, 16, 4, 2, persistent=True, copy_unaligned=False)
    assert_close("mm", mm(a, b, config=cfg), a.double() @ b.double(), 50)
    assert grids == []


def test_fp32_picks_resident_programs_only_for_one_unmasked_step_or_aligned_rows() -> None:
    def picked(m: int, n: int, k: int) -> MMConfig:
        cfg = picked_config(torch.empty((m, k), device="meta"),
                            torch.empty((k, n), device="meta"))
        assert isinstance(cfg, MMConfig)
        return cfg

    assert picked(4391, 4283, 1).persistent  # K of 1: a constant mask
    assert picked(2176, 2887, 16).persistent  # K the whole K tile, C's rows odd
    assert picked(3865, 4032, 31).persistent  # K masked, C's rows on 16 bytes
    assert not picked(2402, 9101, 2).persistent  # K masked and C's rows odd
    assert not picked(7314, 257, 17).persistent
    assert not picked(2459, 4095, 2048).persistent  # a K loop
    assert not picked(256, 256, 16).persistent  # 8 x 2 tiles: under a wave


def test_fp32_a_by_columns_is_copied_by_rows_where_resident_programs_follow() -> None:
    def picked(m: int, n: int, k: int) -> MMConfig:
        a = torch.empty((k, m), device="meta").t()
        cfg = picked_config(a, torch.empty((n, k), device="meta").t())
        assert isinstance(cfg, MMConfig)
        return cfg

    assert picked(8192, 4604, 9).a_rows and picked(8192, 4604, 9).persistent
    assert not picked(1025, 64, 3).a_rows  # 33 tiles: no resident programs, no copy
    assert not picked(24, 8389, 607).a_rows  # a K loop: read in place


@pytest.mark.parametrize("k", [13, 16])
def test_a_copied_by_rows_then_looped_over(k: int, device: torch.device,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # an fp32 A stored by columns (70 rows, 70 apart: off 16 bytes), copied row by row into
    # padded rows, then the one-step resident programs over 5 x 5 tiles
    _resident.clear()
    grids = watch_grids(monkeypatch, mm_module, "_mm_persistent_kernel")
    copied: list[tuple[int, ...]] = []
    real_copy = mm_module._row_copy

    def row_copy(t: torch.Tensor) -> tuple[torch.Tensor, int]:
        copied.append(tuple(t.stride()))
        return real_copy(t)

    monkeypatch.setattr(mm_module, "_row_copy", row_copy)
    a = seeded_randn(k, 70, device=device).t()
    b = seeded_randn(130, k, seed=1, device=device).t()
    cfg = MMConfig(16, 32, 16, 4, 2, a_rows=True, persistent=True, copy_unaligned=False)
    assert_close("mm", mm(a, b, config=cfg), a.double() @ b.double(), k)
    assert copied == [(1, 70)] and len(grids) == 1  # A alone, from its columns
    _resident.clear()
