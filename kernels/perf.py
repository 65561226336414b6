"""The performance half of one op's check: each (dtype, case) timed with everything it is
compared with (the baseline op, torch native, and the same op at the base revision when
comparing), the gated time picked, and the case set against the device's yardsticks."""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from flagbot.kernels import gates, timing
from flagbot.kernels.accuracy import dtype_name
from flagbot.kernels.device import Device
from flagbot.kernels.spec import Case, OpSpec
from flagbot.kernels.yardsticks import Yardsticks

# Kernels shorter than this are judged on launch-inclusive time: for them the host's launch
# path is a large share of what an eager caller pays (unless the runtime replays graphs).
LAUNCH_GATE_US = 50.0
CANDIDATE, NATIVE, BASE = "candidate", "native", "base"


@dataclass
class Contenders:
    """What one op is timed against: the baseline (name, fn or None) and the op at the base
    revision (None when not comparing, or the base has no such op)."""

    baseline: tuple[str, Callable[..., Any] | None]
    base: Callable[..., Any] | None = None


def _ratios(samples: dict[str, list[float]], baseline: str) -> dict[str, Any]:
    def vs(label: str) -> dict[str, float] | None:
        if label not in samples or not samples[label]:
            return None
        return timing.ratio_summary(samples[label], samples[CANDIDATE])
    return {"vs_native": vs(NATIVE), "vs_baseline": vs(baseline), "vs_base": vs(BASE)}


def perf_case(func: Callable[..., Any], spec: OpSpec, case: Case, dtype: torch.dtype,
              device: Device, contenders: Contenders, yardsticks: Yardsticks | None,
              runtime_graphs: bool) -> dict[str, Any]:
    """One case's timings, ratios (of the gated times) and yardsticks."""
    gen = torch.Generator(device=device.torch_device).manual_seed(0)
    args, kwargs = spec.make_inputs(case, dtype, device.torch_device, gen)
    fns: dict[str, Callable[[], Any]] = {CANDIDATE: lambda: func(*args, **kwargs)}
    base_name, base_fn = contenders.baseline
    if base_fn is not None:
        fns[base_name] = lambda: base_fn(*args, **kwargs)
    if contenders.base is not None:
        at_base = contenders.base
        fns[BASE] = lambda: at_base(*args, **kwargs)
    fns[NATIVE] = lambda: spec.reference(*args, **kwargs)
    m = timing.bench(fns, device)
    lat = {k: timing.summary(v) for k, v in m.samples.items()}
    launch = {k: timing.summary(v)["median"] for k, v in m.launch.items()}
    short = lat[CANDIDATE]["median"] < LAUNCH_GATE_US
    gated_on = "launch" if short and m.launch and not runtime_graphs else "device"
    gated = m.launch if gated_on == "launch" else m.samples
    moved, flops = spec.bytes_moved(case, dtype), spec.flops(case)
    ratios = _ratios(gated, base_name)
    entry: dict[str, Any] = {
        "dtype": dtype_name(dtype), "case": case.id, "mode": m.mode, "stalled": m.stalled,
        "warmup_s": round(m.warmup_s, 3),
        "latency_us": {k: round(v["median"], 3) for k, v in lat.items()},
        "launch_us": {k: round(v, 3) for k, v in launch.items()},
        "spread": {k: round(v["spread"], 4) for k, v in lat.items()},
        "gbps": {k: round(moved / (v["median"] * 1e-6) / 1e9, 1) for k, v in lat.items()},
        "tflops": {k: round(flops / (v["median"] * 1e-6) / 1e12, 2) for k, v in lat.items()},
        "gated_on": gated_on,
        **ratios,
        "vs_generic": ratios["vs_baseline"] if base_name == "generic" else None,
        "device_ratios": _ratios(m.samples, base_name),
    }
    if yardsticks is not None:
        entry["yardstick"] = yardsticks.judge(moved, flops, dtype, lat[CANDIDATE]["median"])
    return entry


def performance(func: Callable[..., Any], spec: OpSpec, cases: Sequence[Case],
                dtypes: Sequence[torch.dtype], device: Device, contenders: Contenders,
                yardsticks: Yardsticks | None, runtime_graphs: bool) -> dict[str, Any]:
    """Every (dtype, case) of one op; a kernel failing only under timing is an op result."""
    out: dict[str, Any] = {"status": "measured", "reason": None, "cases": []}
    try:
        for dtype in dtypes:
            for case in cases:
                out["cases"].append(perf_case(func, spec, case, dtype, device, contenders,
                                              yardsticks, runtime_graphs))
                gc.collect()
                device.empty_cache()
    except Exception as exc:
        out["status"], out["reason"] = "error", f"{type(exc).__name__}: {exc}"
    return out


def gate_ratios(kind: str, perf: dict[str, Any]) -> list[gates.Ratio]:
    """The per-case ratios the speed gate judges: vs the baseline (override) or native (new)."""
    key = "vs_baseline" if kind == "override" else "vs_native"
    return [gates.Ratio(**c[key]) for c in perf["cases"] if c.get(key)]


def base_ratios(perf: dict[str, Any]) -> list[gates.Ratio]:
    """Per-case base time / head time, where the base was timed."""
    return [gates.Ratio(**c["vs_base"]) for c in perf["cases"] if c.get("vs_base")]


def copy_fractions(perf: dict[str, Any]) -> list[float]:
    """The candidate's fraction of copy bandwidth on its memory-bound cases."""
    return [float(c["yardstick"]["fraction_of_copy"]) for c in perf.get("cases", [])
            if c.get("yardstick") and c["yardstick"]["bound"] == "memory"
            and c["yardstick"]["fraction_of_copy"] is not None]
