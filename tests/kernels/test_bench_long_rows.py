"""benchmarks/bench_long_rows.py off the GPU: every launch it times computes what torch does
(interpreted kernels), masked row tails and rows of -inf included; the timing itself needs an
accelerator."""

from __future__ import annotations

from types import ModuleType

import pytest
import torch

from .benchmarks_support import load_benchmark
from .closeness import assert_close, seeded_randn
from .standin import cpu_only


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_benchmark("bench_long_rows")


@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
def test_every_candidate_matches_torch(bench: ModuleType, log: bool,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # tiles of 16 over rows of 41: three tiles a row, the last one masked
    monkeypatch.setattr(bench, "TILES", ((16, 1),))
    x = seeded_randn(3, 41) * 4
    x[1, :20] = -float("inf")  # a row starting with -inf: the running max starts there
    fns = bench.candidates(x, log)
    want = fns.pop("torch")()
    assert sorted(fns) == ["lane16/w1", "lane1e16/w1", "picked", "split2048", "split4096",
                           "tile16/w1"]
    for name, fn in fns.items():
        got = fn()
        finite = torch.isfinite(want)
        assert torch.equal(torch.isfinite(got), finite), name
        assert_close("softmax", got[finite], want[finite].double(), x.shape[1])


@cpu_only
def test_refuses_without_an_accelerator(bench: ModuleType,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main([]) == 2
    assert "needs an accelerator" in capsys.readouterr().err
