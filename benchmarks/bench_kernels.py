"""Sweep on an accelerator: every generic op against torch native and FlagGems' own op.

Run (flagbot installed, e.g. `pip install -e .`): python benchmarks/bench_kernels.py
      [--json OUT] [--markdown OUT] [--ops a,b] [--cases ids] [--rows START:END] [--reps N]
      [--shapes fixed|random[:N]|fixed,random[:N]] [--seed S[,S...]] [--sweeps K]
      [--device D] [--resume] [--shard I/N] [--gc on|off]
      [--devices all|D0,D1] [--warm-workers N] [--flaggems-tune-ms W,R] [--parts DIR]
Each row times generic, torch and (when `flag_gems` imports) FlagGems interleaved, two ways:
launch-inclusive (as `triton.testing.do_bench`: L2 flushed, events around each call, the host's
launch path included wherever the device waits for it) and stall-hidden (a device-side sleep
before each call hides the host, so only device time counts), after ~25 ms of warm-up calls,
in two attempts (three where they disagree), the better one per candidate. It checks the
generic result against torch in float64 with the harness's tolerances, and reports speed
ratios (time of the other / time of generic: above 1 means the generic op is faster), for
memory-bound ops the generic op's share of the measured copy bandwidth, and per row where its
wall time went (`phase_s`). Events, sleeps and synchronisation go through the device's own
module (kernels/device.py), so the sweep runs on any accelerator torch and Triton know.

`--shapes random:N` draws N seeded shapes per op (kernels/random_shapes.py) with random dtypes
and layouts; the seed is printed (a new one each sweep unless given) and every row under 0.9x
torch prints its shape, so it can join the fixed sweep below. Targets: generic >= torch and >=
FlagGems at every row, within the NOISE band; a memory-bound row where the generic op reaches
85% of copy bandwidth also meets the torch target. Rows cover odd sizes, vocabulary-length
rows, rows longer than one register block, other dims, transposed and sliced inputs,
broadcasting and GEMV to large squares. Long sweeps: `--warm-workers`, `--flaggems-tune-ms`
and `--devices` (sweep_pool.py); `--resume` keeps the rows a cut-off run already wrote.
"""
from __future__ import annotations

import argparse
import datetime
import gc
import json
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import triton

from flagbot.kernels import random_shapes, timing
from flagbot.kernels.accuracy import compare, upcast
from flagbot.kernels.baseline import _import_flaggems, flaggems_ops
from flagbot.kernels.device import Device, DeviceUnavailable, metadata, resolve
from flagbot.kernels.registry import OPS
from flagbot.kernels.spec import Case
from flagbot.kernels.tolerances import tolerance

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sweep_pool  # noqa: E402 - the benchmark's own folder, found by path
from sweep_pool import in_shard, key_index, parse_shard  # noqa: E402

STARTED = time.perf_counter()  # import time: the warm-up pass reports its start-up cost
BANDWIDTH_TARGET = 0.85
NOISE = 0.03  # ratios within 3% of 1.0 count as "as fast" (spread of repeated runs)
RANDOM_TARGET = 0.95  # random sweeps: the share of shapes at >= this ratio is the headline
PRINT_BELOW = 0.90  # random rows under this ratio to torch print their shape
FIXED_REPS, RANDOM_REPS = 40, 12
DISAGREE = 1.2  # attempts further apart than this for a label: one more attempt
DISTURBED_RATIO, DISTURBED_US = 2.0, 10.0  # a launch-inclusive reading this far over device
WARMUP_MS = 25.0  # busy time before each row's timed rounds, as do_bench's warm-up
F32, F16, BF16 = torch.float32, torch.float16, torch.bfloat16


@dataclass(frozen=True)
class Row:
    """One sweep entry: op, case, dtype and the input layout (contiguous, t, slice)."""

    op: str
    case: Case
    dtype: torch.dtype
    layout: str = "contiguous"
    memory_bound: bool = True
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def _vocab(op: str, dtype: torch.dtype) -> list[Row]:
    return [Row(op, Case((4096, 50257)), dtype), Row(op, Case((2048, 32000)), dtype),
            Row(op, Case((1000, 151936)), dtype)]


SWEEP: list[Row] = [
    # elementwise: aligned, odd, broadcast, transposed, small
    Row("add", Case((1 << 28,)), BF16), Row("add", Case((100_000_007,)), BF16),
    Row("add", Case((100_000_007,)), F32), Row("add", Case((1_000_003,)), F16),
    Row("add", Case((8192, 12289), {"broadcast": 1}), BF16),
    Row("add", Case((8192, 8192)), F32, "t"),
    Row("mul", Case((100_000_007,)), BF16), Row("mul", Case((8192, 12289), {"broadcast": 1}), F32),
    Row("mul", Case((8192, 8192)), BF16, "slice"),
    Row("gelu", Case((1 << 28,)), BF16), Row("gelu", Case((100_000_007,)), BF16),
    Row("gelu", Case((100_000_007,)), F32),
    Row("gelu", Case((100_000_007,), {"approximate": "tanh"}), F16),
    Row("gelu", Case((8192, 8192)), BF16, "t"),
    Row("silu", Case((100_000_007,)), BF16), Row("silu", Case((100_000_007,)), F32),
    Row("silu", Case((8192, 8192)), F16, "slice"),
    # softmax family: short, medium, vocabulary, very long rows, other dims, layouts
    Row("softmax", Case((65536, 128)), F16), Row("softmax", Case((4096, 4096)), BF16),
    Row("softmax", Case((32768, 4096)), F32), Row("softmax", Case((1024, 65536)), BF16),
    *_vocab("softmax", BF16), Row("softmax", Case((4096, 50257)), F32),
    Row("softmax", Case((8, 1_000_003)), F32),
    Row("softmax", Case((4096, 4096), {"dim": 0}), BF16),
    Row("softmax", Case((64, 1000, 128), {"dim": 1}), F32),
    Row("softmax", Case((4096, 4096)), BF16, "t"),
    Row("softmax", Case((4096, 4096)), F16, "slice"),
    Row("log_softmax", Case((65536, 128)), BF16), Row("log_softmax", Case((8192, 1024)), F16),
    *_vocab("log_softmax", BF16), Row("log_softmax", Case((1000, 151936)), F32),
    Row("log_softmax", Case((4096, 4096), {"dim": 0}), F32),
    # norms: short, wide, odd, longer than one register block, sliced rows
    Row("layer_norm", Case((65536, 256)), F16), Row("layer_norm", Case((32768, 4096)), F32),
    Row("layer_norm", Case((16384, 8192)), BF16), Row("layer_norm", Case((16384, 12288)), BF16),
    Row("layer_norm", Case((8192, 5000)), BF16), Row("layer_norm", Case((64, 100_003)), F32),
    Row("layer_norm", Case((512, 65536)), BF16), Row("layer_norm", Case((8192, 4096)), F16, "slice"),
    Row("rms_norm", Case((65536, 256)), BF16), Row("rms_norm", Case((16384, 12288)), BF16),
    Row("rms_norm", Case((8192, 5000)), F16), Row("rms_norm", Case((512, 65536)), F32),
    Row("rms_norm", Case((4096, 4096)), F32),
    # reductions over every dim, transposed inputs, odd sizes
    Row("sum", Case((8192, 8192), {"dim": 0}), F32), Row("sum", Case((8192, 8192), {"dim": 1}), F32),
    Row("sum", Case((8192, 8192), {"dim": 0}), F32, "t"),
    Row("sum", Case((64, 4096, 64), {"dim": 1}), BF16),
    Row("sum", Case((65536, 128), {"dim": 1}), F32),
    Row("sum", Case((8, 12_500_003), {"dim": 1}), F32),
    Row("sum", Case((4099, 5003), {"dim": 0}), BF16),
    Row("mean", Case((8192, 8192), {"dim": 1}), BF16), Row("mean", Case((4096, 4096), {"dim": 0}), F16),
    Row("mean", Case((32, 512, 4097), {"dim": 2}), F32),
    # mm: GEMV, skinny, odd, squares, transposed operands, all three dtypes
    *[Row("mm", Case((1, 8192, 8192)), d, memory_bound=False) for d in (BF16, F16, F32)],
    Row("mm", Case((16, 4096, 4096)), BF16, memory_bound=False),
    Row("mm", Case((64, 8192, 8192)), F16, memory_bound=False),
    Row("mm", Case((1024, 1024, 1024)), BF16, memory_bound=False),
    *[Row("mm", Case((4096, 4096, 4096)), d, memory_bound=False) for d in (BF16, F16, F32)],
    Row("mm", Case((8192, 8192, 8192)), BF16, memory_bound=False),
    Row("mm", Case((4097, 3001, 1999)), BF16, memory_bound=False),
    Row("mm", Case((4096, 4096, 4096)), BF16, "t", memory_bound=False),
    # shapes the random sweeps found or the first random sweeps were written for: odd sizes
    # with K near 1000, GEMV of every orientation, short reduced dims, few very long rows
    *[Row("mm", Case(s), BF16, memory_bound=False)
      for s in ((1999, 1999, 999), (3001, 2999, 1023), (1024, 1024, 1000), (5003, 1237, 997))],
    *[Row("mm", Case(s), BF16, memory_bound=False)
      for s in ((1, 14336, 4096), (1, 4096, 14336), (8192, 1, 8192), (1, 1001, 30011),
                (1, 1459, 3049))],
    # from the random sweeps (2026-11-26): one output column with few rows, a grid of 32 tiles
    Row("mm", Case((264, 1, 8192)), F32, memory_bound=False),
    Row("mm", Case((73, 2047, 4096)), BF16, memory_bound=False),
    Row("mm", Case((2, 1163, 812)), F16, memory_bound=False),
    Row("mean", Case((4097, 4097), {"dim": 0}), F16),
    Row("mean", Case((1999, 3001), {"dim": 0}), BF16),
    Row("mean", Case((8191, 1023), {"dim": 0}), BF16),
    Row("mean", Case((16384, 3, 256), {"dim": 1}), BF16),
    Row("softmax", Case((4, 4_000_037)), BF16), Row("softmax", Case((100, 151936)), BF16),
    Row("log_softmax", Case((8, 1_000_003)), F32),
    # the worst rows of the three 200-shape random sweeps (H100, 2026-11-26)
    *[Row("mm", Case(s), d, memory_bound=False)
      for s, d in (((512, 1080, 1176), BF16), ((251, 273, 1025), BF16), ((128, 1320, 16384), BF16),
                   ((106, 256, 14914), F32), ((32, 4095, 8192), BF16), ((652, 7816, 1024), BF16),
                   ((8192, 2047, 13), BF16), ((16384, 4097, 2), F16))],
    Row("gelu", Case((4097, 8)), F32, "slice"), Row("gelu", Case((9, 511)), F32, "slice"),
    Row("softmax", Case((13, 4951)), BF16, "t"), Row("softmax", Case((33, 4654, 129)), BF16),
    Row("sum", Case((5, 16384, 513), {"dim": 0}), F16),
    Row("sum", Case((22, 2160, 1013), {"dim": 0}), F32, "slice"),
    Row("mean", Case((512, 127, 1024), {"dim": 1}), BF16, "slice"),
    Row("log_softmax", Case((64, 2207, 129)), F16),
    Row("mul", Case((19, 13937), {"broadcast": 1}), BF16),
    Row("add", Case((8193, 1), {"broadcast": 1}), BF16),
]


def parse_case(text: str) -> Case:
    """A Case from its id as results files write it ("5x16384x513[dim=0]",
    "127x59[approximate=tanh]")."""
    dims, _, extra = text.partition("[")
    params: dict[str, Any] = {}
    for item in filter(None, extra.rstrip("]").split(",")):
        key, _, value = item.partition("=")
        params[key] = int(value) if value.lstrip("-").isdigit() else value
    return Case(tuple(int(x) for x in dims.split("x")), params)


def _layout(value: Any, layout: str) -> Any:
    """Same values, another layout: `t` a transposed (dense) view, `slice` a view into a wider
    buffer (rows not adjacent)."""
    if not isinstance(value, torch.Tensor) or value.dim() < 2 or layout == "contiguous":
        return value
    if layout == "t":
        return value.transpose(-1, -2).contiguous().transpose(-1, -2)
    wide = torch.empty((*value.shape[:-1], value.shape[-1] + 64), dtype=value.dtype,
                       device=value.device)
    wide[..., : value.shape[-1]] = value
    return wide[..., : value.shape[-1]]


def copy_bandwidth(dev: Device, elements: int = 1 << 28) -> float:
    """GB/s of a device-to-device copy (1 GiB by default), counting bytes read plus written."""
    src = torch.randn(elements, device=dev.torch_device)
    dst = torch.empty_like(src)
    m = timing.bench({"copy": lambda: dst.copy_(src)}, dev, launch=False)
    return 2 * src.numel() * 4 / (timing.summary(m.samples["copy"])["median"] * 1e-6) / 1e9


def bench_two_ways(dev: Device, fns: dict[str, Callable[[], Any]], reps: int
                   ) -> dict[str, dict[str, float]]:
    """Median microseconds per label, {"launch": ..., "device": ..., "host": ...}.

    launch: as do_bench times (L2 zeroed, start event, the call, end event, no synchronisation
    between calls): while the device is busy with the flush the host enqueues the call, so
    launch cost shows exactly where the host, not the device, is the bottleneck; that is how
    users pay. device: the same after a device-side sleep long enough that the host is always
    ahead (the harness's stall): the kernels' own time. host: the host's own time to make the
    call (it returns once the work is enqueued), read on the host's clock in the launch-
    inclusive rounds: a launch-inclusive time far over the device time with a long host time
    beside it is the launch path's, not the kernel's. Labels are interleaved round by round
    (order reversed every other round) so drift hits all alike. Everything goes through the
    device's own module (`torch.cuda`, `torch.npu`, ...)."""
    labels = list(fns)
    dev.synchronize()
    cache = dev.flush_buffer()
    events: dict[str, dict[str, list[tuple[Any, Any]]]] = {
        label: {"launch": [], "device": []} for label in labels}
    host: dict[str, list[float]] = {label: [] for label in labels}
    for r in range(reps):
        order = labels if r % 2 == 0 else labels[::-1]
        for mode in ("launch", "device"):
            for label in order:
                if mode == "device":
                    dev.stall(timing.STALL_CYCLES)
                cache.zero_()
                start, end = dev.event(), dev.event()
                start.record()
                began = time.perf_counter()
                fns[label]()
                if mode == "launch":
                    host[label].append((time.perf_counter() - began) * 1e6)
                end.record()
                events[label][mode].append((start, end))
    dev.synchronize()
    out = {label: {mode: statistics.median(float(s.elapsed_time(e)) * 1000.0 for s, e in pairs)
                   for mode, pairs in modes.items()} for label, modes in events.items()}
    for label in labels:
        out[label]["host"] = statistics.median(host[label])
    return out


@contextmanager
def collector_paused(paused: bool) -> Iterator[None]:
    """Python's garbage collector off for the block when `paused` (as timeit times): the
    launch-inclusive outliers of the random sweeps (10-30x a row's device time) hit generic and
    FlagGems alike, both launched through Python and Triton, and never torch, which points at
    the host pausing in Python, not at the op. `--gc off` measures whether the collector is it."""
    enabled = gc.isenabled()
    if paused:
        gc.collect()
        gc.disable()
    try:
        yield
    finally:
        if paused and enabled:
            gc.enable()


def best_of_attempts(dev: Device, fns: dict[str, Callable[[], Any]], reps: int
                     ) -> tuple[dict[str, dict[str, float]], int]:
    """bench_two_ways twice (three times when the two disagree by over DISAGREE for any label
    and way); per label and way the lowest median. On the lent H100s whole rows read 5-40x
    slow for every candidate at once (launch-inclusive and device time alike), which no
    property of one op explains: something outside the process shared the device or the host
    for that moment. Such disturbance only ever adds time, so the best attempt is the
    undisturbed one, for every candidate alike."""
    runs = [bench_two_ways(dev, fns, reps), bench_two_ways(dev, fns, reps)]
    if any(max(r[label][mode] for r in runs) > DISAGREE * min(r[label][mode] for r in runs)
           for label in fns for mode in ("launch", "device")):
        runs.append(bench_two_ways(dev, fns, reps))
    best = {label: {mode: min(r[label][mode] for r in runs) for mode in runs[0][label]}
            for label in fns}
    return best, len(runs)


def busy_warmup(dev: Device, fns: dict[str, Callable[[], Any]]) -> int:
    """Keep the device busy with the candidates for about WARMUP_MS before timing; the number
    of rounds run. The device sits idle while the host prepares each row (inputs, compiling,
    FlagGems' tuning), and a short timed loop (12 rounds of a 5 us kernel last ~15 ms) then
    starts cold: in the first random sweeps some rows read 5-40x their device time
    launch-inclusive, torch's and FlagGems' alike, which points at the device or host coming
    back from idle rather than at one op's launch path. do_bench warms up for 25 ms too."""
    began = time.perf_counter()
    for label in fns:  # allocator, lazy initialisation, the rest of autotuning
        fns[label]()
    dev.synchronize()
    one_round = max(time.perf_counter() - began, 1e-6)
    rounds = max(2, min(1000, int(WARMUP_MS / 1000 / one_round)))
    for _ in range(rounds):
        for label in fns:
            fns[label]()
    dev.synchronize()
    return rounds


def _accuracy(row: Row, out: torch.Tensor, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    spec = OPS[row.op]
    expected = spec.reference(*[upcast(a) for a in args], **kwargs).to(row.dtype)
    tol = tolerance(spec.name, row.dtype, spec.reduce_size(row.case))
    ok, max_abs, _, problem = compare(out, expected, tol.rtol, tol.atol)
    return "ok" if ok else f"FAIL ({problem}, max abs {max_abs:.3g})"


def inputs(row: Row, dev: Device) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The row's inputs on the device (seed 0, so every candidate and run sees the same)."""
    spec = OPS[row.op]
    gen = torch.Generator(device=dev.torch_device).manual_seed(0)
    args, kwargs = spec.make_inputs(row.case, row.dtype, dev.torch_device, gen)
    return tuple(_layout(a, row.layout) for a in args), kwargs


def row_header(row: Row) -> dict[str, Any]:
    return {"op": row.op, "case": row.case.id, "dtype": str(row.dtype)[6:], "layout": row.layout}


def measure(row: Row, dev: Device, copy_gbps: float, fg: dict[str, Callable[..., Any]],
            reps: int = FIXED_REPS, gc_off: bool = False) -> dict[str, Any]:
    """Time one row; ratios are other-time / generic-time (above 1: generic faster). `vs_*`
    use launch-inclusive times, `device_vs_*` the stall-hidden ones. `phase_s` says where the
    row's wall time went (inputs, accuracy, first calls: compilation and autotuning, timing).
    `gc_off`: the timed calls run with Python's garbage collector off."""
    spec = OPS[row.op]
    clock = time.perf_counter()
    phase: dict[str, float] = {}

    def lap(name: str) -> None:
        nonlocal clock
        dev.synchronize()
        now = time.perf_counter()
        phase[name] = round(now - clock, 3)
        clock = now

    args, kwargs = inputs(row, dev)
    assert spec.generic is not None
    generic: Callable[..., Any] = spec.generic
    result = row_header(row)
    lap("inputs")
    out = generic(*args, **kwargs)
    lap("first_generic")
    result["accuracy"] = _accuracy(row, out, args, kwargs)
    del out
    lap("accuracy")
    fns: dict[str, Callable[[], Any]] = {"generic": lambda: generic(*args, **kwargs),
                                         "torch": lambda: spec.reference(*args, **kwargs)}
    if row.op in fg:
        fg_fn = fg[row.op]
        try:
            fg_fn(*args, **kwargs)
            fns["flaggems"] = lambda: fg_fn(*args, **kwargs)
        except Exception as exc:  # FlagGems refusing a shape is a result, not a crash
            result["flaggems_error"] = f"{type(exc).__name__}: {str(exc)[:120]}"
    lap("first_flaggems")
    busy_warmup(dev, fns)
    lap("warmup")
    with collector_paused(gc_off):
        times, attempts = best_of_attempts(dev, fns, reps)
    lap("timed")
    result["attempts"] = attempts
    result["phase_s"] = phase
    return rate(result, row, times, copy_gbps)


def rate(result: dict[str, Any], row: Row, times: dict[str, dict[str, float]],
         copy_gbps: float) -> dict[str, Any]:
    """`result` with the times (per label, launch-inclusive and device microseconds), the ratios
    to torch and FlagGems, bandwidth or TFLOP/s and the verdicts filled in."""
    spec = OPS[row.op]
    result["us"] = {k: round(v["launch"], 2) for k, v in times.items()}
    result["device_us"] = {k: round(v["device"], 2) for k, v in times.items()}
    if all("host" in v for v in times.values()):
        result["host_us"] = {k: round(v["host"], 2) for k, v in times.items()}
    for prefix, mode in (("", "launch"), ("device_", "device")):
        gen_us = times["generic"][mode]
        result[f"{prefix}vs_torch"] = round(times["torch"][mode] / gen_us, 3)
        result[f"{prefix}vs_flaggems"] = (round(times["flaggems"][mode] / gen_us, 3)
                                          if "flaggems" in times else None)
    if row.memory_bound:
        moved = spec.bytes_moved(row.case, row.dtype)
        result["generic_gbps"] = round(moved / (times["generic"]["device"] * 1e-6) / 1e9, 1)
        result["torch_gbps"] = round(moved / (times["torch"]["device"] * 1e-6) / 1e9, 1)
        result["of_copy"] = round(result["generic_gbps"] / copy_gbps, 3)
    else:
        result["generic_tflops"] = round(
            spec.flops(row.case) / (times["generic"]["device"] * 1e-6) / 1e12, 1)
    at_copy = row.memory_bound and result["of_copy"] >= BANDWIDTH_TARGET
    result["meets_torch"] = result["vs_torch"] >= 1 - NOISE or at_copy
    result["meets_flaggems"] = result["vs_flaggems"] is None or result["vs_flaggems"] >= 1 - NOISE
    return result


def _ratio(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def _header(result: dict[str, Any]) -> str:
    dev = result["device"]
    several = len(result.get("devices", ())) > 1
    name = f"{len(result['devices'])} x {dev['name']}" if several else dev["name"]
    return (f"{name}, {result['date']}, torch {result['torch']}, triton "
            f"{result['triton']}, FlagGems {result['flaggems'] or 'not installed'}"
            + (f" (autotuner budget {result['flaggems_tune_ms']} ms)"
               if result.get("flaggems_tune_ms") else "")
            + f"; copy bandwidth {result['copy_gbps']:.0f} GB/s (read + write"
            + (", the lowest device's)" if several else ")"))


def markdown(result: dict[str, Any]) -> str:
    """The RESULTS.md sweep table: launch-inclusive times and ratios, then the stall-hidden
    ratios (device time only)."""
    lines = [_header(result), "",
             "| op | shape | dtype | layout | generic us | torch us | FlagGems us | vs torch | "
             "vs FlagGems | device vs torch | device vs FlagGems | generic / copy | accuracy |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in result["rows"]:
        if "error" in r:
            lines.append(f"| {r['op']} | {r['case']} | {r['dtype']} | {r['layout']} | "
                         f"error: {r['error']} | | | | | | | | |")
            continue
        us = r["us"]
        mark_t = "" if r["meets_torch"] else " **below**"
        mark_f = "" if r["meets_flaggems"] else " **below**"
        share = f"{r['of_copy']:.0%}" if "of_copy" in r else f"{r['generic_tflops']} TFLOP/s"
        lines.append(f"| {r['op']} | {r['case']} | {r['dtype']} | {r['layout']} | "
                     f"{us['generic']:.1f} | {us['torch']:.1f} | "
                     f"{us.get('flaggems', float('nan')):.1f} | {_ratio(r['vs_torch'])}{mark_t} | "
                     f"{_ratio(r['vs_flaggems'])}{mark_f} | {_ratio(r['device_vs_torch'])} | "
                     f"{_ratio(r['device_vs_flaggems'])} | {share} | {r['accuracy']} |")
    return "\n".join(lines) + "\n"


def passes(r: dict[str, Any], key: str) -> bool:
    """A random row meets the target against torch or FlagGems (`key` vs_torch, vs_flaggems,
    or their device_ forms): >= 0.95x, or >= 85% of copy bandwidth for a memory-bound op."""
    if r.get(key) is None:
        return True
    return bool(r[key] >= RANDOM_TARGET or r.get("of_copy", 0.0) >= BANDWIDTH_TARGET)


def _shape_of(r: dict[str, Any]) -> str:
    return f"{r['case']} {r['dtype']} {r['layout']}"


def summarize(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per op: rows, the share meeting the target (launch-inclusive and stall-hidden) against
    torch and FlagGems, the worst shape and ratio of each, accuracy failures, errors, and how
    many rows were measured again as disturbed."""
    out: dict[str, dict[str, Any]] = {}
    for op in dict.fromkeys(r["op"] for r in rows):
        mine = [r for r in rows if r["op"] == op]
        good = [r for r in mine if "error" not in r]
        entry: dict[str, Any] = {"rows": len(mine), "errors": len(mine) - len(good),
                                 "inaccurate": sum(r["accuracy"] != "ok" for r in good),
                                 "retimed": sum(bool(r.get("retimed")) for r in good)}
        for key in ("vs_torch", "device_vs_torch", "vs_flaggems", "device_vs_flaggems"):
            rated = [r for r in good if r.get(key) is not None]
            if not rated:
                entry[key] = None
                continue
            worst = min(rated, key=lambda r: r[key])
            entry[key] = {"share": round(sum(passes(r, key) for r in rated) / len(rated), 3),
                          "rated": len(rated), "worst": round(worst[key], 3),
                          "worst_shape": _shape_of(worst),
                          "below_080": sum(r[key] < 0.80 and not passes(r, key) for r in rated)}
        out[op] = entry
    return out


def _cell(entry: dict[str, Any] | None) -> str:
    if entry is None:
        return "-"
    return (f"{entry['share']:.0%} of {entry['rated']} | {entry['worst']:.2f} "
            f"({entry['worst_shape']}) | {entry['below_080']}")


def random_markdown(result: dict[str, Any], sweep: dict[str, Any]) -> str:
    """One random sweep's per-op summary table."""
    lines = [f"{_header(result)}; random shapes, seed {sweep['seed']}, {sweep['count']} per op",
             "", "| op | at target vs torch | worst vs torch | < 0.80x | "
             "at target vs FlagGems | worst vs FlagGems | < 0.80x | device: at target vs "
             "torch | worst | < 0.80x | inaccurate | errors | retimed |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for op, e in sweep["summary"].items():
        lines.append(f"| {op} | {_cell(e['vs_torch'])} | {_cell(e['vs_flaggems'])} | "
                     f"{_cell(e['device_vs_torch'])} | {e['inaccurate']} | {e['errors']} | "
                     f"{e.get('retimed', 0)} |")
    return "\n".join(lines) + "\n"


def planned_rows(args: argparse.Namespace, count: int, seeds: list[int]
                 ) -> tuple[list[tuple[str, Row]], dict[int, list[tuple[str, Row]]]]:
    """The fixed rows and each seed's random rows, keyed ("fixed:I", "random:SEED:I") so that
    shards, resumed runs and their merge agree on every row's identity and order."""
    wanted = set(args.ops.split(",")) if args.ops else None
    cases = set(args.cases.split(",")) if args.cases else None
    fixed: list[tuple[str, Row]] = []
    if "fixed" in args.kinds:
        lo, _, hi = (args.rows or ":").partition(":")
        for i in range(len(SWEEP))[int(lo) if lo else None:int(hi) if hi else None]:
            row = SWEEP[i]
            if (not wanted or row.op in wanted) and (not cases or row.case.id in cases):
                fixed.append((f"fixed:{i}", row))
    ops = [op for op, spec in OPS.items() if spec.generic is not None
           and op in random_shapes.SUPPORTED and (not wanted or op in wanted)]
    sweeps: dict[int, list[tuple[str, Row]]] = {}
    for seed in seeds if count else []:
        # round-robin over ops, so a sweep cut short still covers every op alike
        drawn = {op: random_shapes.draw_rows(op, count, seed) for op in ops}
        # --cases re-times some rows of a sweep; they keep their keys, so runs compare row by row
        sweeps[seed] = [(f"random:{seed}:{i * len(ops) + j}",
                         Row(op, drawn[op][i].case, drawn[op][i].dtype, drawn[op][i].layout,
                             memory_bound=op != "mm"))
                        for i in range(count) for j, op in enumerate(ops)
                        if not cases or drawn[op][i].case.id in cases]
    return fixed, sweeps


def disturbed(r: dict[str, Any]) -> bool:
    """Some candidate's launch-inclusive reading is DISTURBED_RATIO times its device time and
    DISTURBED_US over it. On the lent H100s about one row in 150 read so (5 us kernels at
    50-175 us, generic and FlagGems, both launched from Python) through every attempt of the
    row, and not one of those rows did in another run of the same rows (2026-11-27, add and
    mul over three seeds: 16 such rows in one run and 7 in the next, none in both, with the
    garbage collector on and off alike): a disturbance of the host lasting a fraction of a
    second, not a cost of the shape. What such rows share is the host path: each call is
    enqueued while the device zeroes the flush buffer, which hides roughly the first 100 us of
    host time, and every generic reading left disturbed in the H200 record of 2026-11-27 had a
    host time (`host_us`) of 114 us or more against per-op medians of 34-134 us, so a host
    path near that limit crosses it when the host is slowed."""
    return "us" in r and any(
        r["us"][k] > DISTURBED_RATIO * r["device_us"][k]
        and r["us"][k] - r["device_us"][k] > DISTURBED_US for k in r["us"])


def retime(first: dict[str, Any], again: dict[str, Any], row: Row,
           copy_gbps: float) -> dict[str, Any]:
    """A disturbed row measured once more later in the pass: per label and way the lower of
    the two readings (a disturbance only ever adds time, as in best_of_attempts); the first
    launch-inclusive readings are kept beside them (`first_us`)."""
    if "error" in again:
        return first
    times = {k: {way: min(first[field][k], again.get(field, {}).get(k, first[field][k]))
                 for way, field in (("launch", "us"), ("device", "device_us"),
                                    ("host", "host_us")) if field in first}
             for k in first["us"]}
    out = {**first, "first_us": first["us"], "retimed": True,
           "attempts": first["attempts"] + again["attempts"]}
    if again["accuracy"] != "ok":
        out["accuracy"] = again["accuracy"]
    return rate(out, row, times, copy_gbps)


def run_rows(rows: list[tuple[str, Row]], dev: Device, copy_gbps: float,
             fg: dict[str, Callable[..., Any]], reps: int, sink: list[dict[str, Any]],
             save: Callable[[], None], seed: int | None = None, gc_off: bool = False) -> None:
    """Measure each row not yet in `sink` (a resumed run keeps what it has), saving after each;
    one broken row never loses the others. Rows read `disturbed` are measured once more at the
    end (`retime`)."""
    done = {r["key"] for r in sink if "error" not in r}
    sink[:] = [r for r in sink if r["key"] in done]
    todo = [(key, row) for key, row in rows if key not in done]
    began = time.perf_counter()
    for n, (key, row) in enumerate(todo, 1):
        try:
            r = {"key": key, **measure(row, dev, copy_gbps, fg, reps, gc_off)}
        except Exception as exc:
            r = {"key": key, **row_header(row), "error": f"{type(exc).__name__}: {str(exc)[:160]}"}
        sink.append(r)
        print(json.dumps(r), flush=True)
        if seed is not None and "error" not in r and r["vs_torch"] < PRINT_BELOW:
            print(f"below {PRINT_BELOW}x torch (seed {seed}): {row.op} "
                  f"Case({row.case.shape}, {dict(row.case.params)}) {row.dtype} {row.layout}: "
                  f"{r['vs_torch']:.2f}x launch-inclusive, {r['device_vs_torch']:.2f}x device",
                  flush=True)
        if n % 25 == 0 or n == len(todo):
            spent = time.perf_counter() - began
            print(f"bench_kernels: {n}/{len(todo)} rows on {dev.torch_device}, {spent:.0f} s "
                  f"({spent / n:.2f} s a row)", file=sys.stderr, flush=True)
        save()
        dev.empty_cache()
    by_key = dict(rows)
    again = [i for i, r in enumerate(sink)
             if r["key"] in by_key and not r.get("retimed") and disturbed(r)]
    for i in again:
        row = by_key[sink[i]["key"]]
        try:
            second = {"key": sink[i]["key"], **measure(row, dev, copy_gbps, fg, reps, gc_off)}
        except Exception as exc:
            second = {"error": f"{type(exc).__name__}: {exc}"}
        sink[i] = retime(sink[i], second, row, copy_gbps)
        save()
        dev.empty_cache()
    if again:
        print(f"bench_kernels: {len(again)} disturbed row(s) measured again: "
              + ", ".join(f"{sink[i]['key']} {sink[i]['first_us']['generic']:.1f} -> "
                          f"{sink[i]['us']['generic']:.1f} us" for i in again),
              file=sys.stderr, flush=True)


def order_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: key_index(r["key"]))


def finish(result: dict[str, Any]) -> str:
    """Order every list by row key, summarise each random sweep; the Markdown report."""
    result["rows"] = order_rows(result["rows"])
    text = markdown(result) if result["rows"] else ""
    for sweep in result["random"]:
        sweep["rows"] = order_rows(sweep["rows"])
        sweep["summary"] = summarize(sweep["rows"])
        text += "\n" + random_markdown(result, sweep)
    return text


def verdict(result: dict[str, Any]) -> int:
    every = sweep_pool.all_rows(result)
    ok = all(r.get("meets_torch") and r.get("meets_flaggems") and r.get("accuracy") == "ok"
             for r in result["rows"]) and all(r.get("accuracy") == "ok" for r in every)
    return 0 if ok else 1


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", help="write the results here (after every row)")
    p.add_argument("--markdown", help="write the RESULTS.md tables here")
    p.add_argument("--ops", help="comma-separated op names (default: all)")
    p.add_argument("--cases", help="comma-separated case ids (e.g. 4096x4096x4096); with random "
                   "shapes, only those rows of each sweep, under their keys in the full sweep")
    p.add_argument("--no-flaggems", action="store_true", help="skip FlagGems even if present")
    p.add_argument("--gc", choices=("on", "off"), default="on",
                   help="Python's garbage collector during the timed calls (default: on, as "
                   "users run; off: as timeit times)")
    p.add_argument("--shapes", default="fixed",
                   help="fixed (the sweep below), random or random:N (N per op, default "
                        f"{random_shapes.DEFAULT_COUNT}), or both: fixed,random:N")
    p.add_argument("--seed", help="seed(s) of the random sweeps, comma-separated "
                                  "(default: a new one per sweep, printed)")
    p.add_argument("--sweeps", type=int, default=1, help="random sweeps without --seed")
    p.add_argument("--rows", help="START:END slice of the fixed sweep")
    p.add_argument("--reps", type=int, help="timed calls per candidate and way "
                                            f"(default {FIXED_REPS} fixed, {RANDOM_REPS} random)")
    p.add_argument("--device", help="the device to time on (cuda:1, npu, ...; default: "
                                    "FlagGems' runtime device, else torch's accelerator)")
    p.add_argument("--resume", action="store_true",
                   help="keep the rows already in --json and measure only the others")
    p.add_argument("--shard", help="I/N: measure only every N-th row from the I-th (one of N "
                                   "processes, e.g. one per device)")
    sweep_pool.add_options(p)
    return p


def main(argv: list[str] | None = None) -> int:
    """Measure every row (or those of --ops), print the tables, optionally write JSON/Markdown."""
    args = parser().parse_args(argv)
    args.kinds = [k.strip() for k in args.shapes.split(",")]
    try:
        count = next((random_shapes.parse_spec(k) for k in args.kinds if k.startswith("random")),
                     0)
        shard = parse_shard(args.shard)
        if any(k != "fixed" and not k.startswith("random") for k in args.kinds):
            raise ValueError(f"--shapes {args.shapes!r}: use fixed, random[:N] or both")
        sweep_pool.check_options(args)
    except ValueError as exc:
        print(f"bench_kernels: {exc}", file=sys.stderr)
        return 2
    seeds = ([int(s) for s in args.seed.split(",")] if args.seed
             else [random_shapes.new_seed() for _ in range(args.sweeps)]) if count else []
    if sweep_pool.wanted(args):
        return sweep_pool.run(args, seeds, finish, verdict, disturbed)
    try:
        dev = resolve(args.device)
    except DeviceUnavailable as exc:
        print(f"bench_kernels: {exc}", file=sys.stderr)
        return 2
    if not dev.timed:
        print(f"bench_kernels: {dev.torch_device} has no timing events (or kernels run on "
              "Triton's interpreter): nothing measured", file=sys.stderr)
        return 2
    print(f"bench_kernels: {dev.torch_device} ready ({time.perf_counter() - STARTED:.0f} s)",
          file=sys.stderr, flush=True)
    module, problem = (None, "skipped") if args.no_flaggems else _import_flaggems()
    fg = flaggems_ops(module) if module is not None else {}
    if module is None:
        print(f"bench_kernels: FlagGems not used ({problem})", file=sys.stderr)
    else:
        sweep_pool.flaggems_tuning(module, args.flaggems_tune_ms)
    fixed, sweeps = planned_rows(args, count, seeds)
    if args.warm_only:
        print(f"warm: ready to run rows {time.perf_counter() - STARTED:.0f} s after start", file=sys.stderr,
              flush=True)
        skip = (set(json.loads(Path(args.warm_skip).read_text(encoding="utf-8")))
                if args.warm_skip else set())
        return sweep_pool.warm(dev, fg, [kr for kr in fixed + sum(sweeps.values(), [])
                                         if in_shard(kr[0], shard) and kr[0] not in skip],
                               inputs)
    result: dict[str, Any] = {"rows": [], "random": []}
    if args.resume and args.json and Path(args.json).exists():
        result = json.loads(Path(args.json).read_text(encoding="utf-8"))
    result.update({
        "device": metadata(dev), "torch": torch.__version__, "triton": triton.__version__,
        "date": datetime.date.today().isoformat(), "shard": f"{shard[0]}/{shard[1]}",
        "flaggems": getattr(module, "__version__", None),
        "flaggems_tune_ms": args.flaggems_tune_ms, "gc": args.gc})
    result.setdefault("copy_gbps", copy_bandwidth(dev))
    print(f"bench_kernels: FlagGems {'imported' if module else 'not used'}, copy bandwidth "
          f"{result['copy_gbps']:.0f} GB/s ({time.perf_counter() - STARTED:.0f} s)",
          file=sys.stderr, flush=True)

    def save() -> None:
        if args.json:
            sweep_pool.write_json(Path(args.json), result)

    run_rows([kr for kr in fixed if in_shard(kr[0], shard)], dev, result["copy_gbps"], fg,
             args.reps or FIXED_REPS, result["rows"], save, gc_off=args.gc == "off")
    for seed, rows in sweeps.items():
        print(f"bench_kernels: random sweep, seed {seed}, {count} shapes per op", flush=True)
        sweep = next((s for s in result["random"] if s["seed"] == seed), None)
        if sweep is None:
            sweep = {"seed": seed, "count": count, "rows": []}
            result["random"].append(sweep)
        run_rows([kr for kr in rows if in_shard(kr[0], shard)], dev, result["copy_gbps"], fg,
                 args.reps or RANDOM_REPS, sweep["rows"], save, seed, gc_off=args.gc == "off")
    result["complete"] = True
    text = finish(result)
    print(text)
    save()
    if args.markdown:
        Path(args.markdown).write_text(text, encoding="utf-8")
    return verdict(result)


if __name__ == "__main__":
    raise SystemExit(main())
