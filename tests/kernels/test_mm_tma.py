"""mm through tensor descriptors (kernels/ops/_mm_tma.py) at small odd shapes, on the
interpreter (or a GPU that has them): every operand layout, K split or not, tails past M, N and
K zero-filled by the descriptor; which operands it takes, and that mm() falls back to its
pointer kernel for the rest."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest
import torch

from flagbot.kernels.ops import _mm_tma
from flagbot.kernels.ops.mm import MMConfig, mm, picked_config

from .closeness import assert_close, seeded_randn

F16 = torch.float16


@pytest.fixture
def tma_launches(monkeypatch: pytest.MonkeyPatch, device: torch.device) -> list[tuple[Any, ...]]:
    """The operand shapes and layouts of each launch through descriptors during the test."""
    if not _mm_tma.target_has_tma():
        pytest.skip(f"{device}: Triton's target has no tensor descriptors")
    seen: list[tuple[Any, ...]] = []
    real = _mm_tma.mm_tma

    def watched(a: torch.Tensor, b: torch.Tensor, *args: Any) -> None:
        seen.append((tuple(a.shape), a.stride(1) == 1, tuple(b.shape), b.stride(1) == 1))
        real(a, b, *args)

    monkeypatch.setattr(_mm_tma, "mm_tma", watched)
    return seen


def _operand(rows: int, cols: int, by_columns: bool, seed: int, device: torch.device
             ) -> torch.Tensor:
    t = seeded_randn(rows, cols, dtype=F16, seed=seed, device=device)
    return t.t().contiguous().t() if by_columns else t


@pytest.mark.parametrize(("a_cols", "b_cols"), [(False, False), (True, False), (False, True),
                                                (True, True)], ids=["nn", "tn", "nt", "tt"])
@pytest.mark.parametrize("split", [1, 3])
def test_tiles_through_descriptors_with_tails_everywhere(
        a_cols: bool, b_cols: bool, split: int, device: torch.device,
        tma_launches: list[tuple[Any, ...]]) -> None:
    # 72 rows, 40 columns, K 200: aligned (16-byte) rows or columns, so nothing is copied;
    # 32x32 tiles leave tails on M and N, 64-wide K tiles one on K
    a = _operand(72, 200, a_cols, 0, device)
    b = _operand(200, 40, b_cols, 1, device)
    cfg = MMConfig(32, 32, 64, 4, 2, split_k=split, tma=True)
    assert_close("mm", mm(a, b, config=cfg), a.double() @ b.double(), 200)
    assert tma_launches == [((72, 200), not a_cols, (200, 40), not b_cols)]


def test_odd_sizes_are_copied_to_aligned_rows_then_described(
        device: torch.device, tma_launches: list[tuple[Any, ...]]) -> None:
    # every dim odd: both operands copied to rows padded to 16 elements, which a descriptor
    # can address; the copies keep the logical shapes
    a = seeded_randn(67, 131, dtype=F16, device=device)
    b = seeded_randn(131, 45, dtype=F16, seed=1, device=device)
    cfg = MMConfig(32, 32, 64, 4, 2, tma=True)
    assert_close("mm", mm(a, b, config=cfg), a.double() @ b.double(), 131)
    assert tma_launches == [((67, 131), True, (131, 45), True)]


def test_odd_operands_stored_by_columns_are_copied_by_columns_then_described(
        device: torch.device, tma_launches: list[tuple[Any, ...]]) -> None:
    # both operands transposed, every dim odd: the copies keep their order (a row-by-row copy
    # was a transposing pass), their columns padded to 16 elements, and are described so
    a = seeded_randn(131, 67, dtype=F16, device=device).t()
    b = seeded_randn(45, 131, dtype=F16, seed=1, device=device).t()
    cfg = MMConfig(32, 32, 64, 4, 2, tma=True)
    assert_close("mm", mm(a, b, config=cfg), a.double() @ b.double(), 131)
    assert tma_launches == [((67, 131), False, (131, 45), False)]


def test_what_descriptors_cannot_address_takes_the_pointer_kernel(
        device: torch.device, tma_launches: list[tuple[Any, ...]]) -> None:
    # fp32, and 16-bit read in place with rows 2 bytes apart (no copies asked for)
    a32 = seeded_randn(70, 40, device=device)
    b32 = seeded_randn(40, 33, seed=1, device=device)
    assert_close("mm", mm(a32, b32, config=MMConfig(32, 32, 16, 4, 1, tma=True)),
                 a32.double() @ b32.double(), 40)
    a = seeded_randn(70, 131, dtype=F16, device=device)
    b = seeded_randn(131, 33, dtype=F16, seed=1, device=device)
    cfg = MMConfig(32, 32, 64, 4, 2, tma=True, copy_unaligned=False)
    assert_close("mm", mm(a, b, config=cfg), a.double() @ b.double(), 131)
    assert tma_launches == []
    assert not _mm_tma.ready(a, b) and not _mm_tma.ready(a32, b32)
    wide = seeded_randn(70, 144, dtype=F16, device=device)  # rows 288 bytes apart
    b16 = seeded_randn(128, 40, dtype=F16, seed=1, device=device)
    assert _mm_tma.ready(wide[:, 8:136], b16)
    assert not _mm_tma.ready(wide[:, 1:129], b16)  # its start 2 bytes off 16


def test_every_16bit_tile_asks_for_descriptors() -> None:
    def picked(m: int, n: int, k: int, dtype: torch.dtype) -> MMConfig:
        cfg = picked_config(torch.empty((m, k), dtype=dtype, device="meta"),
                            torch.empty((k, n), dtype=dtype, device="meta"))
        assert isinstance(cfg, MMConfig)
        return cfg

    assert picked(4096, 4096, 4096, torch.bfloat16).tma  # 128x256
    assert picked(2048, 2049, 1500, F16).tma  # 128x128
    assert picked(180, 311, 888, F16).tma  # 32x64
    assert not picked(4096, 4096, 4096, torch.float32).tma


def test_a_triton_without_descriptors_imports_mm_and_takes_the_pointer_kernel() -> None:
    # Triton before 3.4 (and vendors' forks of it) has no triton.tools.tensor_descriptor: mm
    # must still import there, and a configuration asking for descriptors compute without them
    script = """
import importlib
real = importlib.import_module

def older_triton(name, *args):
    if name == "triton.tools.tensor_descriptor":  # what an older Triton lacks
        raise ImportError(f"No module named {name!r}")
    return real(name, *args)

importlib.import_module = older_triton
import torch
from flagbot.kernels.ops import _mm_tma
from flagbot.kernels.ops.mm import MMConfig, mm
assert _mm_tma.TensorDescriptor is None
a = torch.randn(72, 200, dtype=torch.float16)
b = torch.randn(200, 40, dtype=torch.float16)
assert not _mm_tma.ready(a, b)
out = mm(a, b, config=MMConfig(32, 32, 64, 4, 2, tma=True))
assert (out.double() - a.double() @ b.double()).abs().max() < 0.5
print("pointer kernel")
"""
    env = dict(os.environ, TRITON_INTERPRET="1")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "pointer kernel"
