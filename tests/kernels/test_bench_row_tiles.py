"""benchmarks/bench_row_tiles.py off the GPU: every launch of its grids computes what torch does
(interpreted kernels) for each path (softmax rows, reductions along and across the contiguous
dim), a shape is timed through the device's own module, and shapes come from a real results
file. The sweep itself needs an accelerator."""

from __future__ import annotations

from types import ModuleType

import pytest
import torch

from flagbot.kernels.ops._reduce import ReduceConfig
from flagbot.kernels.ops._rows import LoopConfig, RowsConfig
from flagbot.kernels.spec import Case

from .benchmarks_support import BENCHMARKS, load_benchmark
from .closeness import assert_close, seeded_randn
from .standin import cpu_only, forbid_cuda, standin_device


@pytest.fixture(scope="module")
def tiles() -> ModuleType:
    return load_benchmark("bench_row_tiles")


@cpu_only
@pytest.mark.parametrize(("op", "shape", "dim", "kind"), [
    ("softmax", (9, 13), -1, RowsConfig), ("log_softmax", (5, 33), -1, RowsConfig),
    ("sum", (6, 19), 1, ReduceConfig), ("mean", (21, 5, 3), 0, ReduceConfig)])
def test_every_launch_of_a_small_grid_is_exact(tiles: ModuleType, op: str,
                                               shape: tuple[int, ...], dim: int,
                                               kind: type) -> None:
    x = seeded_randn(*shape)
    configs = tiles.grid(op, x, dim % x.dim())
    assert configs and all(isinstance(c, kind) for c in configs)
    assert len({tiles.label(c) for c in configs}) == len(configs)
    if op in ("softmax", "log_softmax"):
        args, kwargs = (x,), {"dim": dim}
        expected = getattr(torch, op)(x.double(), dim)
    else:
        args, kwargs = (x, [dim]), {}
        expected = getattr(torch, op)(x.double(), dim)
    for cfg in configs[::3]:  # every third: each rows / tile / warps value still appears
        assert_close(op, tiles.call(op, args, kwargs, cfg)(), expected, shape[dim])


def test_parse_case_reads_ids_with_parameters(tiles: ModuleType) -> None:
    assert tiles.parse_case("5x16384x513[dim=0]") == Case((5, 16384, 513), {"dim": 0})
    assert tiles.parse_case("127x59[approximate=tanh]").params == {"approximate": "tanh"}
    assert tiles.parse_case("4096x50257") == Case((4096, 50257))


@cpu_only
def test_a_shape_is_timed_through_the_device_module(tiles: ModuleType,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    called = forbid_cuda(monkeypatch)
    r = tiles.time_shape(("sum", Case((30, 7), {"dim": 0}), torch.float32, "slice"),
                         standin_device())
    assert called == []
    assert {"torch", "picked", r["best"]} <= set(r["us"]) and r["best"] != "picked"
    assert r["vs_torch_best"] > 0


def test_shapes_come_from_a_results_file(tiles: ModuleType) -> None:
    results = BENCHMARKS / "results" / "kernels-h100-2026-11-26.json.gz"
    picked = tiles.from_results(results, 0.6, 3, ["sum", "softmax"])
    assert {op for op, _, _, _ in picked} == {"sum", "softmax"} and len(picked) <= 6
    assert all(isinstance(c, Case) for _, c, _, _ in picked)
    assert tiles.guards(["mean"]) and all(op == "mean" for op, _, _, _ in tiles.guards(["mean"]))


@cpu_only
def test_without_an_accelerator_or_with_an_unknown_op_it_exits_2(
        tiles: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    assert tiles.main(["--ops", "mm"]) == 2
    assert "not among" in capsys.readouterr().err
    assert tiles.main(["--ops", "sum"]) == 2
    assert "needs an accelerator" in capsys.readouterr().err


@cpu_only
@pytest.mark.parametrize("op", ["layer_norm", "rms_norm"])
def test_the_norms_grid_holds_both_kernels_and_each_launch_is_exact(
        tiles: ModuleType, op: str) -> None:
    import torch.nn.functional as F

    # rows of 1100 (a 2048 tile in registers, or 1024-element tiles looped with a masked
    # last one), an offset mean of 3 the looped kernel's shifted moments must survive
    x = seeded_randn(3, 1100) + 3
    w, b = seeded_randn(1100, seed=1), seeded_randn(1100, seed=2)
    configs = tiles.grid(op, x, 1)
    kinds = {type(c) for c in configs}
    assert kinds == {RowsConfig, LoopConfig}
    assert len({tiles.label(c) for c in configs}) == len(configs)
    if op == "layer_norm":
        args: tuple = (x, (1100,), w, b)
        kwargs = {"eps": 1e-5}
        expected = F.layer_norm(x.double(), (1100,), w.double(), b.double())
    else:
        args, kwargs = (x, (1100,), w), {"eps": 1e-6}
        expected = F.rms_norm(x.double(), (1100,), w.double(), 1e-6)
    assert tiles._dim(op, x, args, kwargs) == 1
    for cfg in [None, *configs[::2]]:
        assert_close(op, tiles.call(op, args, kwargs, cfg)(), expected, 1100)


def test_norm_rows_come_by_their_ratio_to_flaggems(tiles: ModuleType) -> None:
    results = BENCHMARKS / "results" / "kernels-h200-2026-11-27-r10-partial.json.gz"
    picked = tiles.from_results(results, 0.6, 3, ["layer_norm"], against="flaggems")
    assert picked and all(op == "layer_norm" for op, _, _, _ in picked)
    assert picked[0][1] == Case((8573, 5879))  # 0.49x FlagGems, the worst
    assert tiles.from_results(results, 0.6, 3, ["layer_norm"]) == []  # all beat torch by 0.6
