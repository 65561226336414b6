"""GPU-only sweep: every generic op against torch native and FlagGems' own op, one process.

Run (flagbot installed, e.g. `pip install -e .`): python benchmarks/bench_kernels.py
      [--json OUT] [--markdown OUT] [--ops a,b] [--cases ids] [--rows START:END] [--reps N]
      [--shapes fixed|random[:N]|fixed,random[:N]] [--seed S[,S...]] [--sweeps K]
Each row times generic, torch and (when `flag_gems` imports) FlagGems interleaved, two ways:
launch-inclusive (as `triton.testing.do_bench`: L2 flushed, events around each call, the host's
launch path included wherever the GPU waits for it) and stall-hidden (a device-side sleep
before each call hides the host, so only device time counts). It checks the generic result
against torch in float64 with the harness's tolerances, and reports speed ratios (time of the
other / time of generic: above 1 means the generic op is faster) and, for memory-bound ops, the
generic op's share of the measured copy bandwidth.

`--shapes random:N` draws N seeded shapes per op (kernels/random_shapes.py) with random dtypes
and layouts; the seed is printed (a new one each sweep unless given) and every row under 0.9x
torch prints its shape, so it can join the fixed sweep below. Targets: generic >= torch and >= FlagGems at every row, within the NOISE band;
a memory-bound row where the generic op reaches 85% of copy bandwidth also meets the torch
target. Rows cover odd sizes, vocabulary-length rows, rows longer than one register block,
other dims, transposed and sliced inputs, broadcasting and GEMV to large squares.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import triton

from flagbot.kernels import random_shapes, timing
from flagbot.kernels.accuracy import compare, upcast
from flagbot.kernels.baseline import _import_flaggems, flaggems_ops
from flagbot.kernels.registry import OPS
from flagbot.kernels.spec import Case
from flagbot.kernels.tolerances import tolerance

BANDWIDTH_TARGET = 0.85
NOISE = 0.03  # ratios within 3% of 1.0 count as "as fast" (spread of repeated runs)
RANDOM_TARGET = 0.95  # random sweeps: the share of shapes at >= this ratio is the headline
PRINT_BELOW = 0.90  # random rows under this ratio to torch print their shape
FIXED_REPS, RANDOM_REPS = 40, 12
_EVENT: Any = torch.cuda.Event
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
]


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


def copy_bandwidth() -> float:
    """GB/s of a 1 GiB device-to-device copy, counting bytes read plus bytes written."""
    src = torch.randn(1 << 28, device="cuda")
    dst = torch.empty_like(src)
    m = timing.bench({"copy": lambda: dst.copy_(src)})
    return 2 * src.numel() * 4 / (timing.summary(m.samples["copy"])["median"] * 1e-6) / 1e9


def bench_two_ways(fns: dict[str, Callable[[], Any]], reps: int) -> dict[str, dict[str, float]]:
    """Median microseconds per label, {"launch": ..., "device": ...}.

    launch: as do_bench times (L2 zeroed, start event, the call, end event, no synchronisation
    between calls): while the GPU is busy with the flush the host enqueues the call, so launch
    cost shows exactly where the host, not the GPU, is the bottleneck; that is how users pay.
    device: the same after a device-side sleep long enough that the host is always ahead
    (kernels/timing.py's stall): the kernels' own time. Labels are interleaved round by round
    (order reversed every other round) so drift hits all alike."""
    labels = list(fns)
    for label in labels:  # warm-up: compilation, autotuning, allocator
        for _ in range(3):
            fns[label]()
    torch.cuda.synchronize()
    cache = torch.empty(timing.FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    events: dict[str, dict[str, list[tuple[Any, Any]]]] = {
        label: {"launch": [], "device": []} for label in labels}
    for r in range(reps):
        order = labels if r % 2 == 0 else labels[::-1]
        for label in order:
            cache.zero_()
            start, end = _EVENT(enable_timing=True), _EVENT(enable_timing=True)
            start.record()
            fns[label]()
            end.record()
            events[label]["launch"].append((start, end))
        for label in order:
            timing._stall()
            cache.zero_()
            start, end = _EVENT(enable_timing=True), _EVENT(enable_timing=True)
            start.record()
            fns[label]()
            end.record()
            events[label]["device"].append((start, end))
    torch.cuda.synchronize()
    return {label: {mode: statistics.median(float(s.elapsed_time(e)) * 1000.0 for s, e in pairs)
                    for mode, pairs in modes.items()} for label, modes in events.items()}


def _accuracy(row: Row, out: torch.Tensor, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    spec = OPS[row.op]
    expected = spec.reference(*[upcast(a) for a in args], **kwargs).to(row.dtype)
    tol = tolerance(spec.name, row.dtype, spec.reduce_size(row.case))
    ok, max_abs, _, problem = compare(out, expected, tol.rtol, tol.atol)
    return "ok" if ok else f"FAIL ({problem}, max abs {max_abs:.3g})"


def measure(row: Row, copy_gbps: float, fg: dict[str, Callable[..., Any]],
            reps: int = FIXED_REPS) -> dict[str, Any]:
    """Time one row; ratios are other-time / generic-time (above 1: generic faster). `vs_*`
    use launch-inclusive times, `device_vs_*` the stall-hidden ones."""
    spec = OPS[row.op]
    gen = torch.Generator(device="cuda").manual_seed(0)
    args, kwargs = spec.make_inputs(row.case, row.dtype, torch.device("cuda"), gen)
    args = tuple(_layout(a, row.layout) for a in args)
    assert spec.generic is not None
    generic: Callable[..., Any] = spec.generic
    result: dict[str, Any] = {"op": row.op, "case": row.case.id, "dtype": str(row.dtype)[6:],
                              "layout": row.layout}
    result["accuracy"] = _accuracy(row, generic(*args, **kwargs), args, kwargs)
    fns: dict[str, Callable[[], Any]] = {"generic": lambda: generic(*args, **kwargs),
                                         "torch": lambda: spec.reference(*args, **kwargs)}
    if row.op in fg:
        fg_fn = fg[row.op]
        try:
            fg_fn(*args, **kwargs)
            fns["flaggems"] = lambda: fg_fn(*args, **kwargs)
        except Exception as exc:  # FlagGems refusing a shape is a result, not a crash
            result["flaggems_error"] = f"{type(exc).__name__}: {str(exc)[:120]}"
    times = bench_two_ways(fns, reps)
    result["us"] = {k: round(v["launch"], 2) for k, v in times.items()}
    result["device_us"] = {k: round(v["device"], 2) for k, v in times.items()}
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
    return (f"{dev['name']}, {result['date']}, torch {result['torch']}, triton "
            f"{result['triton']}, FlagGems {result['flaggems'] or 'not installed'}; copy "
            f"bandwidth {result['copy_gbps']:.0f} GB/s (read + write)")


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
    torch and FlagGems, the worst shape and ratio of each, accuracy failures, errors."""
    out: dict[str, dict[str, Any]] = {}
    for op in dict.fromkeys(r["op"] for r in rows):
        mine = [r for r in rows if r["op"] == op]
        good = [r for r in mine if "error" not in r]
        entry: dict[str, Any] = {"rows": len(mine), "errors": len(mine) - len(good),
                                 "inaccurate": sum(r["accuracy"] != "ok" for r in good)}
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
             "torch | worst | < 0.80x | inaccurate | errors |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for op, e in sweep["summary"].items():
        lines.append(f"| {op} | {_cell(e['vs_torch'])} | {_cell(e['vs_flaggems'])} | "
                     f"{_cell(e['device_vs_torch'])} | {e['inaccurate']} | {e['errors']} |")
    return "\n".join(lines) + "\n"


def _run_rows(rows: list[Row], result: dict[str, Any], fg: dict[str, Callable[..., Any]],
              reps: int, sink: list[dict[str, Any]], args: argparse.Namespace,
              random_seed: int | None = None) -> None:
    for row in rows:
        try:
            r = measure(row, result["copy_gbps"], fg, reps)
        except Exception as exc:  # one broken row must not lose the others
            r = {"op": row.op, "case": row.case.id, "dtype": str(row.dtype)[6:],
                 "layout": row.layout, "error": f"{type(exc).__name__}: {str(exc)[:160]}"}
        sink.append(r)
        print(json.dumps(r), flush=True)
        if random_seed is not None and "error" not in r and r["vs_torch"] < PRINT_BELOW:
            print(f"below {PRINT_BELOW}x torch (seed {random_seed}): {row.op} "
                  f"Case({row.case.shape}, {dict(row.case.params)}) {row.dtype} {row.layout}: "
                  f"{r['vs_torch']:.2f}x launch-inclusive, {r['device_vs_torch']:.2f}x device",
                  flush=True)
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        gc.collect()
        torch.cuda.empty_cache()


def _seeds(args: argparse.Namespace) -> list[int]:
    if args.seed:
        return [int(s) for s in args.seed.split(",")]
    return [random_shapes.new_seed() for _ in range(args.sweeps)]


def main(argv: list[str] | None = None) -> int:
    """Measure every row (or those of --ops), print the table, optionally write JSON/Markdown."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json")
    parser.add_argument("--markdown")
    parser.add_argument("--ops", help="comma-separated op names (default: all)")
    parser.add_argument("--cases", help="comma-separated case ids (e.g. 4096x4096x4096)")
    parser.add_argument("--no-flaggems", action="store_true", help="skip FlagGems even if present")
    parser.add_argument("--shapes", default="fixed",
                        help="fixed (the sweep below), random or random:N (N per op, default "
                             f"{random_shapes.DEFAULT_COUNT}), or both: fixed,random:N")
    parser.add_argument("--seed", help="seed(s) of the random sweeps, comma-separated "
                                       "(default: a new one per sweep, printed)")
    parser.add_argument("--sweeps", type=int, default=1, help="random sweeps without --seed")
    parser.add_argument("--rows", help="START:END slice of the fixed sweep (resume a run that "
                                       "ran out of time)")
    parser.add_argument("--reps", type=int, help="timed calls per candidate and way "
                                                 f"(default {FIXED_REPS} fixed, "
                                                 f"{RANDOM_REPS} random)")
    args = parser.parse_args(argv)
    kinds = [k.strip() for k in args.shapes.split(",")]
    try:
        count = next((random_shapes.parse_spec(k) for k in kinds if k.startswith("random")), 0)
    except ValueError as exc:
        print(f"bench_kernels: {exc}", file=sys.stderr)
        return 2
    if any(k != "fixed" and not k.startswith("random") for k in kinds):
        print(f"bench_kernels: --shapes {args.shapes!r}: use fixed, random[:N] or both",
              file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("bench_kernels: needs a CUDA device (nothing measured)", file=sys.stderr)
        return 2
    module, problem = (None, "skipped") if args.no_flaggems else _import_flaggems()
    fg = flaggems_ops(module) if module is not None else {}
    if module is None:
        print(f"bench_kernels: FlagGems not used ({problem})", file=sys.stderr)
    wanted = set(args.ops.split(",")) if args.ops else None
    result: dict[str, Any] = {
        "device": timing.device_metadata(), "torch": torch.__version__,
        "triton": triton.__version__, "date": datetime.date.today().isoformat(),
        "flaggems": getattr(module, "__version__", None), "copy_gbps": copy_bandwidth(),
        "rows": [], "random": []}
    text = ""
    if "fixed" in kinds:
        lo, _, hi = (args.rows or ":").partition(":")
        chosen = SWEEP[int(lo) if lo else None:int(hi) if hi else None]
        fixed = [row for row in chosen if (not wanted or row.op in wanted)
                 and (not args.cases or row.case.id in args.cases.split(","))]
        _run_rows(fixed, result, fg, args.reps or FIXED_REPS, result["rows"], args)
        text += markdown(result)
    if count:
        ops = [op for op, spec in OPS.items() if spec.generic is not None
               and op in random_shapes.SUPPORTED and (not wanted or op in wanted)]
        for seed in _seeds(args):
            print(f"bench_kernels: random sweep, seed {seed}, {count} shapes per op", flush=True)
            sweep: dict[str, Any] = {"seed": seed, "count": count, "rows": []}
            result["random"].append(sweep)
            # round-robin over ops, so a sweep cut short still covers every op alike
            drawn = {op: random_shapes.draw_rows(op, count, seed) for op in ops}
            rows = [Row(op, drawn[op][i].case, drawn[op][i].dtype, drawn[op][i].layout,
                        memory_bound=op != "mm") for i in range(count) for op in ops]
            _run_rows(rows, result, fg, args.reps or RANDOM_REPS, sweep["rows"], args, seed)
            sweep["summary"] = summarize(sweep["rows"])
            text += "\n" + random_markdown(result, sweep)
    print(text)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    if args.markdown:
        Path(args.markdown).write_text(text, encoding="utf-8")
    every = result["rows"] + [r for sweep in result["random"] for r in sweep["rows"]]
    ok = all(r.get("meets_torch") and r.get("meets_flaggems") and r.get("accuracy") == "ok"
             for r in result["rows"]) and all(r.get("accuracy") == "ok" for r in every)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
