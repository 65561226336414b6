"""benchmarks/bench_kernels.py off the GPU: one row measured end to end on the stand-in device
(interpreted kernels, host-clock events), and the sharding, resuming and merging that let a
long sweep run as several processes. CI has no GPU, so this is what keeps the benchmark from
rotting between device runs."""

from __future__ import annotations

import dataclasses
import gc
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import torch

from flagbot.kernels.spec import Case

from .benchmarks_support import load_benchmark
from .standin import cpu_only, forbid_cuda, standin_device


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_benchmark("bench_kernels")


@cpu_only
@pytest.mark.parametrize("op, case, layout", [
    ("add", Case((37, 29), {"broadcast": 1}), "contiguous"),
    ("softmax", Case((5, 77)), "t"),
    ("mm", Case((3, 17, 40)), "slice"),
])
def test_a_row_is_measured_through_the_device_module(bench: ModuleType,
                                                     monkeypatch: pytest.MonkeyPatch, op: str,
                                                     case: Case, layout: str) -> None:
    called = forbid_cuda(monkeypatch)
    dev = standin_device()
    row = bench.Row(op, case, torch.float32, layout, memory_bound=op != "mm")
    r = bench.measure(row, dev, copy_gbps=10.0, fg={}, reps=2)
    assert called == []
    assert r["accuracy"] == "ok"
    assert set(r["us"]) == set(r["device_us"]) == set(r["host_us"]) == {"generic", "torch"}
    assert r["vs_torch"] > 0 and r["vs_flaggems"] is None
    # the host's time to make each call, read on its own clock (stand-in events read the same
    # clock around the call, so the host's part of the call can be no longer than the whole)
    assert all(0 < r["host_us"][k] <= r["us"][k] + 1 for k in r["us"])
    assert {"inputs", "first_generic", "accuracy", "warmup", "timed"} <= set(r["phase_s"])
    assert r["attempts"] in (2, 3)
    assert ("of_copy" in r) == (op != "mm")


@cpu_only
@pytest.mark.parametrize("gc_off", [False, True])
def test_gc_off_pauses_the_collector_for_the_timed_calls_only(
        bench: ModuleType, monkeypatch: pytest.MonkeyPatch, gc_off: bool) -> None:
    seen: list[bool] = []
    real = bench.best_of_attempts

    def watched(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(bench, "best_of_attempts", watched)
    row = bench.Row("add", Case((64,)), torch.float32)
    r = bench.measure(row, standin_device(), copy_gbps=10.0, fg={}, reps=1, gc_off=gc_off)
    assert r["accuracy"] == "ok" and r["vs_torch"] > 0
    assert seen == [not gc_off]
    assert gc.isenabled()  # back on after the row


@cpu_only
def test_a_wrong_kernel_is_reported_inaccurate(bench: ModuleType,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from flagbot.kernels.registry import OPS

    wrong = dataclasses.replace(OPS["add"], generic=lambda x, y, **kw: x - y)
    monkeypatch.setitem(OPS, "add", wrong)
    row = bench.Row("add", Case((64,)), torch.float32)
    r = bench.measure(row, standin_device(), copy_gbps=10.0, fg={}, reps=1)
    assert r["accuracy"].startswith("FAIL")


def _args(bench: ModuleType, *argv: str) -> Any:
    args = bench.parser().parse_args(list(argv))
    args.kinds = [k.strip() for k in args.shapes.split(",")]
    return args


def test_shards_deal_every_row_once_and_children_plan_the_same_rows(bench: ModuleType) -> None:
    parent = _args(bench, "--shapes", "fixed,random:7", "--ops", "add,mm,softmax",
                   "--devices", "cuda:0,cuda:1", "--warm-workers", "3")
    seeds = [11, 12]
    fixed, sweeps = bench.planned_rows(parent, 7, seeds)
    assert fixed and all(r.op in {"add", "mm", "softmax"} for _, r in fixed)
    assert set(sweeps) == {11, 12} and all(len(rows) == 21 for rows in sweeps.values())
    every = [key for key, _ in fixed] + [key for rows in sweeps.values() for key, _ in rows]
    assert len(set(every)) == len(every)
    for n in (1, 2, 3):
        dealt = [key for i in range(n) for key in every if bench.in_shard(key, (i, n))]
        assert sorted(dealt) == sorted(every)
    # Stages: the fixed sweep, then one per seed; each stage's children plan exactly the rows
    # the parent planned for it.
    stages = bench.sweep_pool.stages(parent, seeds)
    assert [name for name, _ in stages] == ["fixed", "seed-11", "seed-12"]
    planned: list[tuple[str, Any]] = []
    for _, selection in stages:
        child = _args(bench, *selection, "--shard", "1/2")
        assert not bench.sweep_pool.wanted(child)
        count = 7 if child.shapes.startswith("random") else 0
        child_seeds = [int(v) for v in child.seed.split(",")] if child.seed else []
        got_fixed, got_sweeps = bench.planned_rows(child, count, child_seeds)
        planned += got_fixed + [kr for rows in got_sweeps.values() for kr in rows]
    assert planned == fixed + sweeps[11] + sweeps[12]
    assert "--gc" not in stages[0][1]
    off = _args(bench, "--shapes", "random:7", "--seed", "11", "--gc", "off")
    assert bench.sweep_pool.stages(off, [11])[0][1][-2:] == ["--gc", "off"]
    assert bench.sweep_pool.wanted(parent)


def test_cases_pick_rows_of_a_random_sweep_under_their_own_keys(bench: ModuleType) -> None:
    _, full = bench.planned_rows(_args(bench, "--shapes", "random:9", "--ops", "sum,softmax"),
                                 9, [5])
    picked_ids = {full[5][1][1].case.id, full[5][4][1].case.id}
    args = _args(bench, "--shapes", "random:9", "--ops", "sum,softmax",
                 "--cases", ",".join(sorted(picked_ids)))
    _, some = bench.planned_rows(args, 9, [5])
    assert some[5] == [(key, row) for key, row in full[5] if row.case.id in picked_ids]
    assert 2 <= len(some[5]) < len(full[5])


def test_bad_options_exit_2(bench: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--shard", "2/2"]) == 2
    assert bench.main(["--shapes", "random:0"]) == 2
    assert bench.main(["--flaggems-tune-ms", "fast"]) == 2
    assert bench.main(["--devices", "all", "--shard", "0/2"]) == 2
    err = capsys.readouterr().err
    assert "--shard '2/2'" in err and "--flaggems-tune-ms 'fast'" in err


def _row(key: str, op: str, ratio: float) -> dict[str, Any]:
    return {"key": key, "op": op, "case": key, "dtype": "float32", "layout": "contiguous",
            "accuracy": "ok", "vs_torch": ratio, "device_vs_torch": ratio, "vs_flaggems": None,
            "device_vs_flaggems": None, "of_copy": 0.5, "meets_torch": ratio >= 0.97,
            "meets_flaggems": True, "us": {"generic": 1.0, "torch": ratio},
            "device_us": {"generic": 1.0, "torch": ratio}, "generic_tflops": 1.0}


def test_parts_merge_in_row_order_with_every_device(bench: ModuleType, tmp_path: Path) -> None:
    device = {"name": "stand-in"}
    parts = []
    for i in range(2):
        part = {"device": {**device, "index": i}, "copy_gbps": 3000.0 - i, "date": "d",
                "complete": True,
                "torch": "t", "triton": "tr", "flaggems": None, "shard": f"{i}/2",
                "rows": [_row(f"fixed:{k}", "add", 1.0) for k in range(i, 6, 2)],
                "random": [{"seed": 5, "count": 3,
                            "rows": [_row(f"random:5:{k}", "mul", 0.5 + k / 10)
                                     for k in range(i, 6, 2)]}]}
        path = tmp_path / f"part-{i}.json"
        path.write_text(json.dumps(part))
        parts.append(path)
    result = bench.sweep_pool.merge(parts + [tmp_path / "missing.json"])
    text = bench.finish(result)
    assert [r["key"] for r in result["rows"]] == [f"fixed:{k}" for k in range(6)]
    assert [r["key"] for r in result["random"][0]["rows"]] == [f"random:5:{k}" for k in range(6)]
    assert result["copy_gbps"] == 2999.0 and len(result["devices"]) == 2
    assert "complete" not in result
    summary = result["random"][0]["summary"]["mul"]["vs_torch"]
    assert summary["rated"] == 6 and summary["worst"] == 0.5 and summary["share"] == pytest.approx(1 / 6, abs=1e-3)
    assert text.startswith("2 x stand-in") and "seed 5" in text
    assert bench.sweep_pool.merge([tmp_path / "none.json"]) is None


@pytest.mark.parametrize("disturbed_rows", [0, 1])
def test_a_complete_stage_is_timed_again_only_for_rows_newly_called_disturbed(
        bench: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        disturbed_rows: int) -> None:
    rows = [_row(f"fixed:{k}", "add", 1.0) for k in range(3)]
    for r in rows[:disturbed_rows]:  # a launch reading 2.5x its device time, never retimed
        r["us"]["generic"], r["device_us"]["generic"] = 50.0, 20.0
    part = {"device": {"name": "stand-in"}, "copy_gbps": 1.0, "date": "d", "complete": True,
            "torch": "t", "triton": "tr", "flaggems": None, "shard": "0/1", "rows": rows,
            "random": []}
    (tmp_path / "fixed-part-0.json").write_text(json.dumps(part))
    calls: list[str] = []
    monkeypatch.setattr(bench.sweep_pool, "_warm_stage", lambda *a: calls.append("warm"))
    monkeypatch.setattr(bench.sweep_pool, "_time_stage",
                        lambda *a: calls.append("time") or [])
    args = bench.parser().parse_args(["--shapes", "fixed", "--warm-workers", "2", "--resume",
                                      "--parts", str(tmp_path)])
    args.kinds = ["fixed"]
    bench.sweep_pool.run(args, [], bench.finish, bench.verdict, bench.disturbed)
    assert calls == ["time"] * disturbed_rows  # never warmed again; timed only to retime


def _stage_part(shard: str, keys: list[int], complete: bool = True) -> dict[str, Any]:
    return {"device": {"name": "H200", "index": 0}, "copy_gbps": 4000.0, "date": "d",
            "complete": complete, "torch": "t", "triton": "tr", "flaggems": None,
            "shard": shard, "rows": [],
            "random": [{"seed": 5, "count": 9,
                        "rows": [_row(f"random:5:{k}", "add", 1.0) for k in keys]}]}


@pytest.mark.parametrize(("before", "after"), [(1, 2), (2, 1), (2, 3)])
def test_a_stage_resumed_on_another_number_of_devices_is_dealt_afresh(
        bench: ModuleType, tmp_path: Path, before: int, after: int) -> None:
    pool = bench.sweep_pool
    for i in range(before):
        (tmp_path / f"seed-5-part-{i}.json").write_text(json.dumps(
            _stage_part(f"{i}/{before}", [k for k in range(9) if k % before == i])))
    pool.reshard(tmp_path, "seed-5", after)
    outputs = [tmp_path / f"seed-5-part-{i}.json" for i in range(after)]
    for i, path in enumerate(outputs):
        part = json.loads(path.read_text())
        assert part["shard"] == f"{i}/{after}" and part["complete"]
        assert part["device"] == {"name": "H200", "index": 0}  # where the rows were timed
        assert [r["key"] for r in part["random"][0]["rows"]] == [
            f"random:5:{k}" for k in range(9) if k % after == i]
    assert sorted(p.name for p in tmp_path.glob("*.dealt")) == [
        f"seed-5-part-{i}.json.dealt" for i in range(before)]  # the earlier files kept
    assert not (tmp_path / f"seed-5-part-{after}.json").exists()
    merged = pool.merge(outputs)
    assert sorted(r["key"] for r in merged["random"][0]["rows"]) == sorted(
        f"random:5:{k}" for k in range(9))  # every row once
    pool.reshard(tmp_path, "seed-5", after)  # dealt for this count already: left alone
    assert len(list(tmp_path.glob("*.dealt"))) == before


def test_a_stage_dealt_afresh_stays_incomplete_where_it_was(bench: ModuleType,
                                                            tmp_path: Path) -> None:
    (tmp_path / "fixed-part-0.json").write_text(json.dumps(
        _stage_part("0/2", [0, 2, 4])))  # shard 1/2 never written
    bench.sweep_pool.reshard(tmp_path, "fixed", 1)
    part = json.loads((tmp_path / "fixed-part-0.json").read_text())
    assert not part["complete"] and len(part["random"][0]["rows"]) == 3


def test_a_complete_stage_of_one_device_is_not_timed_again_on_two(
        bench: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "fixed-part-0.json").write_text(json.dumps(
        {**_stage_part("0/1", []), "rows": [_row(f"fixed:{k}", "add", 1.0) for k in range(3)],
         "random": []}))
    calls: list[str] = []
    monkeypatch.setattr(bench.sweep_pool, "_warm_stage", lambda *a: calls.append("warm"))
    monkeypatch.setattr(bench.sweep_pool, "_time_stage",
                        lambda *a: calls.append("time") or [])
    monkeypatch.setattr(bench.sweep_pool, "device_names", lambda spec: ["cuda:0", "cuda:1"])
    args = bench.parser().parse_args(["--shapes", "fixed", "--warm-workers", "2", "--resume",
                                      "--devices", "all", "--parts", str(tmp_path)])
    args.kinds = ["fixed"]
    bench.sweep_pool.run(args, [], bench.finish, bench.verdict, bench.disturbed)
    assert calls == []
    assert [json.loads((tmp_path / f"fixed-part-{i}.json").read_text())["shard"]
            for i in range(2)] == ["0/2", "1/2"]


def test_a_resumed_stage_warms_only_the_rows_it_lacks(bench: ModuleType,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    part = {"rows": [], "random": [{"seed": 5, "count": 3, "rows": [
        _row("random:5:0", "add", 1.0), {"key": "random:5:1", "error": "OOM"}]}]}
    output = tmp_path / "seed-5-part-0.json"
    output.write_text(json.dumps(part))
    assert bench.sweep_pool.measured_keys([output, tmp_path / "absent.json"]) == ["random:5:0"]
    spawned: list[list[str]] = []
    monkeypatch.setattr(bench.sweep_pool, "_spawn",
                        lambda argv, log, env: spawned.append(argv))
    monkeypatch.setattr(bench.sweep_pool, "_wait", lambda procs, what: [])
    for resume in (False, True):
        args = bench.parser().parse_args(["--shapes", "random:3", "--warm-workers", "2",
                                          *(["--resume"] if resume else [])])
        bench.sweep_pool._warm_stage(args, "seed-5", ["--shapes", "random:3"], [""], tmp_path,
                                     [output])
    assert all("--warm-skip" not in argv for argv in spawned[:2])
    for argv in spawned[2:]:
        skip = Path(argv[argv.index("--warm-skip") + 1])
        assert json.loads(skip.read_text()) == ["random:5:0"]  # the failed row is warmed


def test_resumed_rows_are_kept_and_failed_ones_retried(bench: ModuleType,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    measured: list[str] = []

    def fake_measure(row: Any, *rest: Any) -> dict[str, Any]:
        measured.append(row.case.id)
        return {"op": row.op, "vs_torch": 1.0}

    monkeypatch.setattr(bench, "measure", fake_measure)
    rows = [(f"random:1:{i}", bench.Row("add", Case((100 + i,)), torch.float32))
            for i in range(3)]
    sink = [{"key": "random:1:0", "vs_torch": 1.0}, {"key": "random:1:1", "error": "OOM"}]
    saves: list[int] = []
    bench.run_rows(rows, standin_device(), 1.0, {}, 1, sink, lambda: saves.append(len(sink)))
    assert measured == ["101", "102"]
    assert [r["key"] for r in sink] == ["random:1:0", "random:1:1", "random:1:2"]
    assert saves == [2, 3]


@cpu_only
@pytest.mark.parametrize("lasting", [False, True])
def test_disturbed_rows_are_measured_again_and_keep_the_lower_reading(
        bench: ModuleType, monkeypatch: pytest.MonkeyPatch, lasting: bool) -> None:
    real = bench.measure
    calls: list[str] = []

    def slowed_once(row: Any, *rest: Any) -> dict[str, Any]:
        r = real(row, *rest)
        calls.append(row.case.id)
        slowed = row.case.id == "96" and (lasting or calls.count("96") == 1)
        # the host stalled through the row: launches read 40x the kernels' own time. The
        # readings are set, not the CPU's own: a busy test machine would disturb them too.
        return bench.rate(r, row, {k: {"launch": 500.0 if slowed else 12.0, "device": 10.0,
                                       "host": 20.0} for k in r["us"]}, 10.0)

    monkeypatch.setattr(bench, "measure", slowed_once)
    rows = [(f"random:1:{i}", bench.Row("add", Case((64 + 32 * i,)), torch.float32))
            for i in range(2)]
    sink: list[dict[str, Any]] = []
    bench.run_rows(rows, standin_device(), 10.0, {}, 1, sink, lambda: None)
    assert calls == ["64", "96", "96"]  # only the disturbed row, once more, at the end
    slow = sink[1]
    assert slow["retimed"] and slow["first_us"]["generic"] > 40 * slow["device_us"]["generic"]
    assert bench.disturbed(slow) == lasting  # a cost that lasts is kept, not hidden
    assert slow["vs_torch"] == pytest.approx(slow["us"]["torch"] / slow["us"]["generic"],
                                             abs=0.01)
    assert "retimed" not in sink[0] and not bench.disturbed(sink[0])
    assert set(slow["host_us"]) == {"generic", "torch"}  # kept through the retime


def test_flaggems_tuners_get_the_budget(bench: ModuleType) -> None:
    import triton
    import triton.language as tl

    @triton.autotune(configs=[triton.Config({"B": 16}), triton.Config({"B": 32})], key=["n"])
    @triton.jit
    def kernel(x_ptr, n, B: tl.constexpr):  # type: ignore[no-untyped-def]
        pass

    module = ModuleType("fakegems")
    kernel.base_fn.__module__ = "fakegems.ops"
    assert bench.sweep_pool.flaggems_tuning(module, "2,7") >= 1
    assert kernel.num_warmups == 2.0 and kernel.num_reps == 7.0
    assert kernel.do_bench is kernel._do_bench
    # Autotuners of other packages are left alone.
    assert bench.sweep_pool.flaggems_tuning(ModuleType("othergems"), "2,7") == 0


@cpu_only
def test_the_warm_up_pass_calls_each_row_once_and_counts_failures(
        bench: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    calls: list[str] = []

    def refusing(*args: Any, **kwargs: Any) -> None:
        calls.append("flaggems")
        raise RuntimeError("shape refused")  # FlagGems refusing is not a warm-up failure

    rows = [("fixed:0", bench.Row("add", Case((33,)), torch.float32)),
            ("fixed:1", bench.Row("add", Case((7, 5)), torch.float32))]
    assert bench.sweep_pool.warm(standin_device(), {"add": refusing}, rows, bench.inputs) == 0
    assert calls == ["flaggems", "flaggems"]
    broken = [("fixed:2", bench.Row("nosuchop", Case((3,)), torch.float32))]
    assert bench.sweep_pool.warm(standin_device(), {}, rows + broken, bench.inputs) == 1
    assert "warm: fixed:2 nosuchop" in capsys.readouterr().err
