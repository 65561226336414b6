"""benchmarks/bench_mm_host_tma.py: every way it times computes the same product (on the
interpreter here, which emulates descriptors), and without a GPU that has them it says so."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from flagbot.kernels.ops import _mm_tma
from flagbot.kernels.ops.mm import MMConfig

from .benchmarks_support import load_benchmark
from .closeness import assert_close, seeded_randn


@pytest.fixture(scope="module")
def bench() -> Any:
    return load_benchmark("bench_mm_host_tma")


@pytest.mark.parametrize("transposed", [False, True], ids=["rows", "odd-columns"])
def test_each_way_computes_the_product(bench: Any, device: torch.device,
                                       transposed: bool) -> None:
    if not _mm_tma.target_has_tma():
        pytest.skip(f"{device}: Triton's target has no tensor descriptors")
    if transposed:  # both stored by columns 41 and 47 elements apart: copied to aligned ones
        a = seeded_randn(47, 41, dtype=torch.float16, seed=1, device=device).t()
        b = seeded_randn(45, 47, dtype=torch.float16, seed=2, device=device).t()
    else:
        a = seeded_randn(40, 48, dtype=torch.float16, seed=1, device=device)
        b = seeded_randn(48, 72, dtype=torch.float16, seed=2, device=device)
    ways = bench.ways(a, b, MMConfig(32, 64, 32, 4, 2))
    assert tuple(ways) == bench.WAYS
    for name in ("torch", "picked", "pointer", "descriptors"):
        assert_close("mm", ways[name](), a.float() @ b.float(), reduced=a.shape[1])
    copied_a, copied_b = ways["aligned copies"]()
    assert (copied_a is a, copied_b is b) == (not transposed, not transposed)
    assert torch.equal(copied_a, a) and torch.equal(copied_b, b)
    assert ways["make descriptors"]() is None
    assert ways["launch only"]() is None  # into its own output, which it does not return


def test_without_a_gpu_that_has_descriptors_it_says_so(
        bench: Any, capsys: pytest.CaptureFixture[str]) -> None:
    if torch.cuda.is_available() and _mm_tma.target_has_tma():
        pytest.skip("this host has such a GPU")
    assert bench.main() == 2
    assert "sm_90" in capsys.readouterr().err
