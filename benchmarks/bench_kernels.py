"""GPU-only sweep: every generic op against torch native and FlagGems' own op, one process.

Run: PYTHONPATH=. python benchmarks/bench_kernels.py [--json OUT] [--markdown OUT] [--ops a,b]
Each row times generic, torch and (when `flag_gems` imports) FlagGems interleaved
(kernels/timing.py), checks the generic result against torch in float64 with the harness's
tolerances, and reports speed ratios (time of the other / time of generic: above 1 means the
generic op is faster) and, for memory-bound ops, the generic op's share of the measured copy
bandwidth. Targets: generic >= torch and >= FlagGems at every row, within the NOISE band;
a memory-bound row where the generic op reaches 85% of copy bandwidth also meets the torch
target. Rows cover odd sizes, vocabulary-length rows, rows longer than one register block,
other dims, transposed and sliced inputs, broadcasting and GEMV to large squares.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import triton

from flagbot.kernels import timing
from flagbot.kernels.accuracy import compare, upcast
from flagbot.kernels.baseline import _import_flaggems, flaggems_ops
from flagbot.kernels.registry import OPS
from flagbot.kernels.spec import Case
from flagbot.kernels.tolerances import tolerance

BANDWIDTH_TARGET = 0.85
NOISE = 0.03  # ratios within 3% of 1.0 count as "as fast" (spread of repeated runs)
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


def _accuracy(row: Row, out: torch.Tensor, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    spec = OPS[row.op]
    expected = spec.reference(*[upcast(a) for a in args], **kwargs).to(row.dtype)
    tol = tolerance(spec.name, row.dtype, spec.reduce_size(row.case))
    ok, max_abs, _, problem = compare(out, expected, tol.rtol, tol.atol)
    return "ok" if ok else f"FAIL ({problem}, max abs {max_abs:.3g})"


def measure(row: Row, copy_gbps: float, fg: dict[str, Callable[..., Any]]) -> dict[str, Any]:
    """Time one row; ratios are other-time / generic-time (above 1: generic faster)."""
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
    m = timing.bench(fns)
    lat = {k: timing.summary(v)["median"] for k, v in m.samples.items()}
    result["mode"] = m.mode
    result["us"] = {k: round(v, 2) for k, v in lat.items()}
    result["vs_torch"] = round(timing.ratio_summary(m.samples["torch"],
                                                    m.samples["generic"])["median"], 3)
    result["vs_flaggems"] = (round(timing.ratio_summary(m.samples["flaggems"],
                                                        m.samples["generic"])["median"], 3)
                             if "flaggems" in m.samples else None)
    if row.memory_bound:
        moved = spec.bytes_moved(row.case, row.dtype)
        result["generic_gbps"] = round(moved / (lat["generic"] * 1e-6) / 1e9, 1)
        result["torch_gbps"] = round(moved / (lat["torch"] * 1e-6) / 1e9, 1)
        result["of_copy"] = round(result["generic_gbps"] / copy_gbps, 3)
    else:
        result["generic_tflops"] = round(spec.flops(row.case) / (lat["generic"] * 1e-6) / 1e12, 1)
    at_copy = row.memory_bound and result["of_copy"] >= BANDWIDTH_TARGET
    result["meets_torch"] = result["vs_torch"] >= 1 - NOISE or at_copy
    result["meets_flaggems"] = result["vs_flaggems"] is None or result["vs_flaggems"] >= 1 - NOISE
    return result


def _ratio(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def markdown(result: dict[str, Any]) -> str:
    """The RESULTS.md sweep table."""
    dev = result["device"]
    lines = [f"{dev['name']}, {result['date']}, torch {result['torch']}, triton "
             f"{result['triton']}, FlagGems {result['flaggems'] or 'not installed'}; copy "
             f"bandwidth {result['copy_gbps']:.0f} GB/s (read + write)", "",
             "| op | shape | dtype | layout | generic us | torch us | FlagGems us | vs torch | "
             "vs FlagGems | generic / copy | accuracy |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in result["rows"]:
        if "error" in r:
            lines.append(f"| {r['op']} | {r['case']} | {r['dtype']} | {r['layout']} | "
                         f"error: {r['error']} | | | | | | |")
            continue
        us = r["us"]
        mark_t = "" if r["meets_torch"] else " **below**"
        mark_f = "" if r["meets_flaggems"] else " **below**"
        share = f"{r['of_copy']:.0%}" if "of_copy" in r else f"{r['generic_tflops']} TFLOP/s"
        lines.append(f"| {r['op']} | {r['case']} | {r['dtype']} | {r['layout']} | "
                     f"{us['generic']:.1f} | {us['torch']:.1f} | "
                     f"{us.get('flaggems', float('nan')):.1f} | {_ratio(r['vs_torch'])}{mark_t} | "
                     f"{_ratio(r['vs_flaggems'])}{mark_f} | {share} | {r['accuracy']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Measure every row (or those of --ops), print the table, optionally write JSON/Markdown."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json")
    parser.add_argument("--markdown")
    parser.add_argument("--ops", help="comma-separated op names (default: all)")
    parser.add_argument("--cases", help="comma-separated case ids (e.g. 4096x4096x4096)")
    parser.add_argument("--no-flaggems", action="store_true", help="skip FlagGems even if present")
    parser.add_argument("--budget-ms", type=float, default=timing.BUDGET_MS,
                        help="timed repeats per row, all candidates together (milliseconds)")
    args = parser.parse_args(argv)
    timing.BUDGET_MS = args.budget_ms
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
        "rows": []}
    for row in SWEEP:
        if wanted and row.op not in wanted:
            continue
        if args.cases and row.case.id not in args.cases.split(","):
            continue
        try:
            r = measure(row, result["copy_gbps"], fg)
        except Exception as exc:  # one broken row must not lose the others
            r = {"op": row.op, "case": row.case.id, "dtype": str(row.dtype)[6:],
                 "layout": row.layout, "error": f"{type(exc).__name__}: {str(exc)[:160]}"}
        result["rows"].append(r)
        print(json.dumps(r), flush=True)
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        gc.collect()
        torch.cuda.empty_cache()
    text = markdown(result)
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text, encoding="utf-8")
    ok = all(r.get("meets_torch") and r.get("meets_flaggems") and r.get("accuracy") == "ok"
             for r in result["rows"])
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
