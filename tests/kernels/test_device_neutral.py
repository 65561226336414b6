"""The timing path on a stand-in device module: every call goes through the device's own
module (as on torch.npu, torch.mlu, ...), none through torch.cuda by name."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from flagbot.kernels import timing
from flagbot.kernels.check import CheckOptions, run_check
from flagbot.kernels.device import DeviceUnavailable, metadata, resolve
from flagbot.kernels.loader import Backend, load_backend
from flagbot.kernels.report import build, markdown

from .standin import StandInModule, cpu_only, fast_timing, forbid_cuda, standin_device

__all__ = ["fast_timing"]
ROOT = Path(__file__).resolve().parents[2]
# The stand-in runs kernels on CPU tensors, which needs Triton's interpreter; on a GPU machine
# the same path runs on CUDA itself (the GPU tests of test_timing.py and test_compare.py).


def test_bench_times_through_the_device_module_only(monkeypatch: pytest.MonkeyPatch,
                                                     fast_timing: None) -> None:
    called = forbid_cuda(monkeypatch)
    dev = standin_device()
    x = torch.randn(1000)
    m = timing.bench({"a": lambda: x * 2, "b": lambda: x + 1}, dev)
    assert called == []
    assert m.mode == "events+l2flush" and not m.stalled  # no graphs, no _sleep offered
    assert set(m.samples) == set(m.launch) == {"a", "b"}
    assert all(v > 0 for v in m.samples["a"] + m.launch["b"])
    assert {"Event", "Event.record", "Event.elapsed_time", "synchronize"} <= set(dev.module.calls)


@cpu_only
def test_full_check_on_the_standin_device(monkeypatch: pytest.MonkeyPatch, nvidia: Backend,
                                          fast_timing: None) -> None:
    called = forbid_cuda(monkeypatch)
    dev = standin_device()
    options = CheckOptions(shapes="ci", seeds=(0,), ops=["softmax"],
                           dtypes=[torch.float32], wait_s=0)
    result = run_check(nvidia, options, device=dev)
    assert called == []
    [entry] = result.entries
    assert entry["performance"]["status"] == "measured", entry["performance"]
    case = entry["performance"]["cases"][0]
    assert set(case["latency_us"]) == set(case["launch_us"]) == {"candidate", "generic",
                                                                  "native"}
    # Interpreted kernels take far longer than 50 us, so the gate judges device time.
    assert case["gated_on"] == "device"
    assert case["yardstick"]["bound"] == "memory" and case["yardstick"]["fraction_of_copy"] > 0
    assert entry["verdict"]["status"] in ("pass", "fail", "near")
    assert result.health is not None and result.health["busy"] is None
    doc = build(["kernels"], options, {"path": "p", "vendor_name": "v", "error": None},
                result.entries, result.exit_code, None, device=dev, result=result)
    assert doc["environment"]["device"]["name"] == "stand-in accelerator"
    assert doc["yardsticks"]["copy_gbps"] > 0
    assert "| softmax |" in markdown(doc)


@cpu_only
def test_busy_device_is_reported_instead_of_timed(monkeypatch: pytest.MonkeyPatch,
                                                  nvidia: Backend) -> None:
    dev = standin_device(StandInModule(others=[("4242", 20_000)]))
    options = CheckOptions(shapes="ci", seeds=(0,), ops=["softmax"],
                           dtypes=[torch.float32], wait_s=0)
    result = run_check(nvidia, options, device=dev)
    [entry] = result.entries
    assert entry["performance"]["status"] == "not measured"
    assert entry["performance"]["reason"].startswith("device busy: 1 other process")
    assert entry["verdict"]["status"] == "unmeasured"
    assert result.exit_code == 2  # an environment problem, not the vendor's fault


def test_a_small_process_beside_the_check_is_recorded_but_not_busy() -> None:
    from flagbot.kernels import health

    state = health.wait_until_free(standin_device(StandInModule(others=[("77", 900)])), 0)
    assert state["busy"] is None and "77" in state["other_processes"][0]


def test_short_free_memory_counts_as_busy() -> None:
    from flagbot.kernels import health

    dev = standin_device(StandInModule(free=10 << 30, total=80 << 30))
    state = health.wait_until_free(dev, max_wait_s=0.05, poll_s=0.01)
    assert state["busy"] and "10.0 of 80.0 GiB free" in state["busy"]
    assert dev.module.calls.count("mem_get_info") >= 2  # it polled while waiting


def test_metadata_comes_from_the_device_module() -> None:
    meta = metadata(standin_device())
    assert meta is not None
    assert (meta["name"], meta["type"], meta["graphs"], meta["cuda"]) == (
        "stand-in accelerator", "cpu", False, None)


def test_unknown_device_is_a_usage_error() -> None:
    with pytest.raises(DeviceUnavailable, match="not a torch device"):
        resolve("warp-drive")
    if not torch.cuda.is_available():
        with pytest.raises(DeviceUnavailable, match="not available here"):
            resolve("cuda")


def test_cpu_device_is_not_timed() -> None:
    dev = resolve("cpu")
    assert dev.module is None and not dev.timed and metadata(dev) is None


@cpu_only
def test_template_backend_loads_for_the_standin(fast_timing: None) -> None:
    backend = load_backend(ROOT / "backends" / "_template")
    result = run_check(backend, CheckOptions(shapes="ci", seeds=(0,), dtypes=[torch.float32],
                                             wait_s=0), device=standin_device())
    [entry] = result.entries
    assert entry["seconds"]["accuracy"] > 0 and entry["seconds"]["performance"] > 0


@cpu_only
def test_expectations_round_trip_and_plots_on_the_standin(tmp_path: Path,
                                                          fast_timing: None) -> None:
    from flagbot.kernels import expected
    from flagbot.kernels.outputs import Outputs

    backend = load_backend(ROOT / "backends" / "_template")
    options = CheckOptions(shapes="ci", seeds=(0,), dtypes=[torch.float32], wait_s=0)
    dev = standin_device()
    result = run_check(backend, options, device=dev)
    doc = build(["kernels"], options, {"path": "p", "vendor_name": "v", "error": None},
                result.entries, result.exit_code, None, device=dev, result=result)
    file, plots = tmp_path / "expected.csv", tmp_path / "plots"
    Outputs(write_expected=file, plot_dir=plots).write(doc)
    rows = expected.read(file)
    assert len(rows) == len(result.entries[0]["performance"]["cases"]) > 0
    assert doc["plots"] == ["silu.png"]
    assert (plots / "silu.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # Re-checking the same measurements against the written file passes ...
    assert Outputs(expected={k: (v[0], 0.5) for k, v in rows.items()}).judge(
        result.entries, 0) == 0
    # ... and a file expecting half the time fails the op as a regression.
    halved = {k: (v[0] / 3, 0.15) for k, v in rows.items()}
    assert Outputs(expected=halved).judge(result.entries, 0) == 1
    assert "REGRESSION: float32" in result.entries[0]["verdict"]["reason"]


@cpu_only
def test_copy_bandwidth_floor_fails_a_slow_op(fast_timing: None) -> None:
    from flagbot.kernels.gates import Thresholds

    backend = load_backend(ROOT / "backends" / "_template")
    options = CheckOptions(shapes="ci", seeds=(0,), dtypes=[torch.float32], wait_s=0,
                           thresholds=Thresholds(override_min_speedup=1e-6,
                                                 new_op_min_fraction_of_native=1e-6,
                                                 min_fraction_of_copy=0.5))
    result = run_check(backend, options, device=standin_device())
    [entry] = result.entries
    # Interpreted kernels reach a sliver of the (host-timed) copy bandwidth.
    assert entry["verdict"]["status"] == "fail" and result.exit_code == 1
    assert "copy bandwidth" in entry["verdict"]["reason"]


def test_the_import_pipeline_picks_its_device_without_asking_torch_cuda(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from flagbot.kernels.intake import verdict
    from flagbot.kernels.intake.operators_cmd import remeasure_problem

    # A CUDA build of torch answers torch.accelerator.is_available() through
    # torch.cuda.is_available(): that is torch's own business, not the harness asking CUDA, so
    # the real answer is taken first and handed back without that inner call.
    available = torch.accelerator.is_available()
    monkeypatch.setattr(torch.accelerator, "is_available", lambda: available)
    called = forbid_cuda(monkeypatch)
    plan = verdict.plan_cases({"aten": "abs", "name": "abs", "params": {}, "shapes": [[300]],
                               "dtypes": ["float32"], "seeds": [0]})
    problem = remeasure_problem(2)
    assert called == []
    if plan.device.type == "cpu":  # no accelerator here: the interpreter's cases
        assert plan.shapes == "ci" and problem is not None and "accelerator" in problem
