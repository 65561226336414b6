"""All device timing lives here, so noisy measurement code stays in one place: warm-up, L2
flush, interleaved repeats, graphs for short kernels, launch-inclusive times, medians, spreads.

Everything goes through a `Device` (kernels/device.py): events, synchronisation, streams and
graphs come from the device's own torch module (`torch.cuda`, `torch.npu`, ...), never from
`torch.cuda` by name, so the same code times on every vendor's chip.

Two times per call, reported side by side:
- device time: events around the call while the device is kept busy (so the host's launch
  path is hidden) and after a 256 MB buffer was zeroed (cold L2, as do_bench does); kernels
  under ~20 us are captured N-per-graph and replayed where the device offers graphs (inside a
  graph L2 is not flushed: warm-cache numbers). Candidates run interleaved A B C, C B A, ...
  so that drift (clocks, temperature) hits all alike.
- launch-inclusive time: from an idle device, N calls back to back between two events, per
  call: what an eager loop pays, the host's launch path included wherever it is longer than
  the kernel (warm L2: the same inputs each call). For kernels of a few microseconds this is
  most of the cost, and it is what the gates judge there unless the runtime replays graphs.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from flagbot.kernels.device import Device, resolve

GRAPH_BELOW_US = 20.0
GRAPH_REPLAY_US = 1000.0  # calls per graph chosen so that one replay lasts about this long
BUDGET_MS = 400.0  # time per case spent on timed device repeats, all candidates together
LAUNCH_BUDGET_MS = 100.0  # the same for launch-inclusive repeats
MIN_ROUNDS, MAX_ROUNDS = 10, 50
MIN_LAUNCH_ROUNDS = 5
WARMUP_CALLS = 3
STALL_CYCLES = 400_000  # ~200 us at 2 GHz: longer than any host-side launch path
HOST_US = 20.0  # rough host cost of one launch, for sizing launch-inclusive batches
LAUNCH_BATCH_US = 2000.0  # a launch-inclusive batch of back-to-back calls lasts about this
MAX_BATCH = 100


@dataclass
class Measurement:
    """Per-call times in microseconds for each label, and how they were taken."""

    mode: str  # "events+l2flush" or "graph"
    samples: dict[str, list[float]]  # device time
    launch: dict[str, list[float]] = field(default_factory=dict)  # launch-inclusive time
    stalled: bool = False  # the launch path was hidden by a device-side stall
    warmup_s: float = 0.0  # wall seconds of the first calls (compilation, autotuning)


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


def _estimate_us(dev: Device, fn: Callable[[], Any]) -> float:
    dev.stall(STALL_CYCLES)
    start, end = dev.event(), dev.event()
    start.record()
    for _ in range(5):
        fn()
    end.record()
    dev.synchronize()
    return float(start.elapsed_time(end)) * 1000.0 / 5


def _timed(dev: Device, run: Callable[[], Any], before: Callable[[], Any] | None
           ) -> tuple[Any, Any]:
    # The stall keeps the device busy while Python enqueues the timed work, so host launch
    # overhead (Triton's launcher, heuristics, autotuner lookup: tens of us) never shows up
    # as device time. Seen on an H200 (2026-11-26): without it a 22 us rms_norm read 22-59 us.
    dev.stall(STALL_CYCLES)
    if before is not None:
        before()
    start, end = dev.event(), dev.event()
    start.record()
    run()
    end.record()
    return start, end


def _graph_of(dev: Device, fn: Callable[[], Any], calls: int) -> Callable[[], Any]:
    api = dev.graph_api()
    assert api is not None
    cls, capture = api
    with dev.side_stream():
        fn()  # allocations and lazy initialisation happen outside the capture
    graph = cls()
    with capture(graph):
        for _ in range(calls):
            fn()
    replay: Callable[[], Any] = graph.replay
    return replay


def _graphs(dev: Device, fns: Mapping[str, Callable[[], Any]], estimates: Mapping[str, float]
            ) -> tuple[dict[str, Callable[[], Any]], dict[str, int]] | None:
    """Graph replays of each callable, or None where the device has no graphs or a callable
    cannot be captured (it synchronises, or reads a host value)."""
    if dev.graph_api() is None or max(estimates.values()) >= GRAPH_BELOW_US:
        return None
    per_call = {label: max(1, min(500, int(GRAPH_REPLAY_US / max(estimates[label], 0.5))))
                for label in fns}
    try:
        runs = {label: _graph_of(dev, fn, per_call[label]) for label, fn in fns.items()}
    except Exception:  # noqa: BLE001 - any capture failure means: time it eagerly
        dev.synchronize()
        return None
    return runs, per_call


def launch_inclusive(dev: Device, fns: Mapping[str, Callable[[], Any]],
                     estimates: Mapping[str, float]) -> dict[str, list[float]]:
    """Per-call microseconds of an eager loop: from an idle device, N calls back to back
    (each waits for the host to launch it, so a launch path longer than the kernel shows),
    divided by N. Averaging N calls keeps host-side jitter out of the median, which one
    synchronised call per sample does not (seen on an H100: 74-130 us for one 28 us kernel)."""
    labels = list(fns)
    calls = {label: max(1, min(MAX_BATCH, int(LAUNCH_BATCH_US / (estimates[label] + HOST_US))))
             for label in labels}
    round_us = sum(calls[label] * (estimates[label] + HOST_US) for label in labels)
    rounds = max(MIN_LAUNCH_ROUNDS,
                 min(MAX_ROUNDS, int(LAUNCH_BUDGET_MS * 1000.0 / max(round_us, 1.0))))
    events: dict[str, list[tuple[Any, Any]]] = {label: [] for label in labels}
    for r in range(rounds):
        for label in _order(labels, r):
            dev.synchronize()
            start, end = dev.event(), dev.event()
            start.record()
            for _ in range(calls[label]):
                fns[label]()
            end.record()
            events[label].append((start, end))
    dev.synchronize()
    return {label: [float(s.elapsed_time(e)) * 1000.0 / calls[label] for s, e in events[label]]
            for label in labels}


def bench(fns: Mapping[str, Callable[[], Any]], device: Device | None = None,
          launch: bool = True) -> Measurement:
    """Time every callable interleaved with the others; per-call microseconds per label."""
    dev = device or resolve()
    labels = list(fns)
    began = time.perf_counter()
    for _ in range(WARMUP_CALLS):
        for label in labels:
            fns[label]()
    dev.synchronize()
    warmup_s = time.perf_counter() - began
    estimates = {label: _estimate_us(dev, fns[label]) for label in labels}
    per_call = {label: 1 for label in labels}
    runs: dict[str, Callable[[], Any]] = dict(fns)
    cache = dev.flush_buffer()
    before: Callable[[], Any] | None = cache.zero_
    graphs = _graphs(dev, fns, estimates)
    if graphs is not None:
        mode, (runs, per_call), before = "graph", graphs, None
        round_us = GRAPH_REPLAY_US * len(labels)
    else:
        mode, round_us = "events+l2flush", sum(estimates.values())
    rounds = max(MIN_ROUNDS, min(MAX_ROUNDS, int(BUDGET_MS * 1000.0 / max(round_us, 1.0))))
    events: dict[str, list[tuple[Any, Any]]] = {label: [] for label in labels}
    for r in range(rounds):
        for label in _order(labels, r):
            events[label].append(_timed(dev, runs[label], before))
    dev.synchronize()
    samples = {label: [float(s.elapsed_time(e)) * 1000.0 / per_call[label]
                       for s, e in events[label]] for label in labels}
    stalled = getattr(dev.module, "_sleep", None) is not None
    launched = launch_inclusive(dev, fns, estimates) if launch else {}
    return Measurement(mode=mode, samples=samples, launch=launched, stalled=stalled,
                       warmup_s=warmup_s)


def device_metadata(device: Device | None = None) -> dict[str, Any] | None:
    """The device's metadata (kernels/device.py); None on the CPU."""
    from flagbot.kernels.device import metadata

    return metadata(device or resolve())
