"""All device timing and device queries live here, so noisy measurement code stays in one
place: warm-up, L2 flush, interleaved repeats, CUDA graphs for short kernels, medians and
spreads, and the device's metadata.

Method: device events, never host clocks (the host returns before the kernel ends); a 256 MB
buffer zeroed before each timed call so every call starts with a cold L2 (as do_bench does);
candidates interleaved A B C, C B A, ... so that drift (clocks, temperature) hits all alike;
kernels under ~20 us are captured N-per-graph and replayed, because launch overhead would
otherwise be most of what we time (inside a graph L2 is not flushed: warm-cache numbers).
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

GRAPH_BELOW_US = 20.0
GRAPH_REPLAY_US = 1000.0  # calls per graph chosen so that one replay lasts about this long
FLUSH_BYTES = 256 * 1024 * 1024
BUDGET_MS = 400.0  # time per case spent on timed repeats, all candidates together
MIN_ROUNDS, MAX_ROUNDS = 10, 50
WARMUP_CALLS = 3
STALL_CYCLES = 400_000  # ~200 us at 2 GHz: longer than any host-side launch path
# torch.cuda's Event and Stream constructors are unannotated; typed once here.
_EVENT: Any = torch.cuda.Event
_STREAM: Any = torch.cuda.Stream
_SLEEP: Any = torch.cuda._sleep


@dataclass
class Measurement:
    """Per-call times in microseconds for each label, and how they were taken."""

    mode: str  # "events+l2flush" or "cuda-graph"
    samples: dict[str, list[float]]


def quantile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile of `values` (q in [0, 1])."""
    data = sorted(values)
    if not data:
        raise ValueError("quantile of no values")
    pos = q * (len(data) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(data) - 1)
    return data[lo] + (data[hi] - data[lo]) * (pos - lo)


def summary(samples: Sequence[float]) -> dict[str, float]:
    """median, p20, p80 and spread = (p80 - p20) / median of one label's samples."""
    med = statistics.median(samples)
    p20, p80 = quantile(samples, 0.2), quantile(samples, 0.8)
    return {"median": med, "p20": p20, "p80": p80, "spread": (p80 - p20) / med if med else 0.0}


def ratio_summary(base: Sequence[float], cand: Sequence[float]) -> dict[str, float]:
    """Speedup base/cand over paired (same-round) samples: median, low (p20), high (p80)."""
    ratios = [b / c for b, c in zip(base, cand, strict=True) if c > 0]
    return {"median": statistics.median(ratios), "low": quantile(ratios, 0.2),
            "high": quantile(ratios, 0.8)}


def _order(labels: list[str], round_no: int) -> list[str]:
    return labels if round_no % 2 == 0 else labels[::-1]


def _stall() -> None:
    # Keep the GPU busy while Python enqueues the timed work, so host launch overhead
    # (Triton's launcher, heuristics, autotuner lookup: tens of us) never shows up as
    # device time. Seen on an H200 (2026-11-26): without it a 22 us rms_norm read 22-59 us.
    _SLEEP(STALL_CYCLES)


def _estimate_us(fn: Callable[[], Any]) -> float:
    _stall()
    start, end = _EVENT(enable_timing=True), _EVENT(enable_timing=True)
    start.record()
    for _ in range(5):
        fn()
    end.record()
    torch.cuda.synchronize()
    return float(start.elapsed_time(end)) * 1000.0 / 5


def _timed(run: Callable[[], Any], before: Callable[[], Any] | None) -> tuple[Any, Any]:
    _stall()
    if before is not None:
        before()
    start, end = _EVENT(enable_timing=True), _EVENT(enable_timing=True)
    start.record()
    run()
    end.record()
    return start, end


def _graph_of(fn: Callable[[], Any], calls: int) -> Any:
    stream = _STREAM()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()  # allocations and lazy initialisation happen outside the capture
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            fn()
    return graph


def bench(fns: Mapping[str, Callable[[], Any]]) -> Measurement:
    """Time every callable interleaved with the others; per-call microseconds per label."""
    labels = list(fns)
    for _ in range(WARMUP_CALLS):
        for label in labels:
            fns[label]()
    torch.cuda.synchronize()
    estimates = {label: _estimate_us(fns[label]) for label in labels}
    per_call = {label: 1 for label in labels}
    runs: dict[str, Callable[[], Any]] = dict(fns)
    before: Callable[[], Any] | None = None
    if max(estimates.values()) < GRAPH_BELOW_US:
        mode = "cuda-graph"
        for label in labels:
            per_call[label] = max(1, min(500, int(GRAPH_REPLAY_US / max(estimates[label], 0.5))))
            runs[label] = _graph_of(fns[label], per_call[label]).replay
        round_us = sum(GRAPH_REPLAY_US for _ in labels)
    else:
        mode = "events+l2flush"
        cache = torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
        before = cache.zero_
        round_us = sum(estimates.values())
    rounds = max(MIN_ROUNDS, min(MAX_ROUNDS, int(BUDGET_MS * 1000.0 / max(round_us, 1.0))))
    events: dict[str, list[tuple[Any, Any]]] = {label: [] for label in labels}
    for r in range(rounds):
        for label in _order(labels, r):
            events[label].append(_timed(runs[label], before))
    torch.cuda.synchronize()
    samples = {label: [float(s.elapsed_time(e)) * 1000.0 / per_call[label]
                       for s, e in events[label]] for label in labels}
    return Measurement(mode=mode, samples=samples)


def _nvidia_smi(index: int) -> dict[str, str]:
    # Read-only query: clocks are recorded as found, never set (shared runners must not be
    # reconfigured, and a locked clock would not be what users' jobs see).
    fields = ["driver_version", "clocks.sm", "clocks.mem", "clocks.max.sm", "clocks.max.mem",
              "temperature.gpu", "power.draw", "power.limit"]
    if shutil.which("nvidia-smi") is None:
        return {}
    try:
        out = subprocess.run(["nvidia-smi", f"--id={index}", f"--query-gpu={','.join(fields)}",
                              "--format=csv,noheader,nounits"], capture_output=True, text=True,
                             timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return {}
    values = [v.strip() for v in out.split(",")]
    return dict(zip(fields, values, strict=True)) if len(values) == len(fields) else {}


def device_metadata() -> dict[str, Any] | None:
    """Name, capability, SMs, memory, L2, CUDA/driver versions and clocks; None without a GPU."""
    if not torch.cuda.is_available():
        return None
    index = torch.cuda.current_device()
    props = torch.cuda.get_device_properties(index)
    meta: dict[str, Any] = {
        "name": props.name,
        "capability": f"{props.major}.{props.minor}",
        "multiprocessors": props.multi_processor_count,
        "memory_bytes": props.total_memory,
        "l2_cache_bytes": getattr(props, "L2_cache_size", None),
        "cuda": torch.version.cuda,
    }
    meta["nvidia_smi"] = _nvidia_smi(index)
    return meta
