"""GPU-only: generic memory-bound ops vs measured copy bandwidth, mm vs cuBLAS.

Run: PYTHONPATH=. python benchmarks/bench_kernels.py [--json OUT] [--markdown OUT]
Targets: add/mul/gelu/silu/softmax/layer_norm >= 85% of the device's measured copy bandwidth
at large sizes; generic mm in bf16 >= 70% of torch.mm (cuBLAS) at 4096^3.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import triton

from flagbot.kernels import timing
from flagbot.kernels.registry import OPS
from flagbot.kernels.spec import Case

BANDWIDTH_TARGET, MM_TARGET = 0.85, 0.70
# (op, case, dtype): large sizes, hundreds of MB moved, far beyond L2.
MEMORY_BOUND = [
    ("add", Case((1 << 28,)), torch.float32), ("add", Case((1 << 28,)), torch.bfloat16),
    ("mul", Case((1 << 28,)), torch.float32), ("mul", Case((1 << 28,)), torch.bfloat16),
    ("gelu", Case((1 << 28,)), torch.float32), ("gelu", Case((1 << 28,)), torch.bfloat16),
    ("silu", Case((1 << 28,)), torch.float32), ("silu", Case((1 << 28,)), torch.bfloat16),
    ("softmax", Case((32768, 4096)), torch.float32),
    ("softmax", Case((32768, 4096)), torch.bfloat16),
    ("layer_norm", Case((32768, 4096)), torch.float32),
    ("layer_norm", Case((32768, 4096)), torch.bfloat16),
]


def copy_bandwidth() -> float:
    """GB/s of a 1 GiB device-to-device copy, counting bytes read plus bytes written."""
    src = torch.randn(1 << 28, device="cuda")
    dst = torch.empty_like(src)
    m = timing.bench({"copy": lambda: dst.copy_(src)})
    return 2 * src.numel() * 4 / (timing.summary(m.samples["copy"])["median"] * 1e-6) / 1e9


def _row(op: str, case: Case, dtype: torch.dtype, copy_gbps: float) -> dict[str, Any]:
    spec = OPS[op]
    gen = torch.Generator(device="cuda").manual_seed(0)
    args, kwargs = spec.make_inputs(case, dtype, torch.device("cuda"), gen)
    assert spec.generic is not None
    generic: Callable[..., Any] = spec.generic
    m = timing.bench({"generic": lambda: generic(*args, **kwargs),
                      "native": lambda: spec.reference(*args, **kwargs)})
    moved = spec.bytes_moved(case, dtype)
    gbps = {k: moved / (timing.summary(v)["median"] * 1e-6) / 1e9 for k, v in m.samples.items()}
    return {"op": op, "case": case.id, "dtype": str(dtype).removeprefix("torch."),
            "generic_gbps": round(gbps["generic"], 1), "native_gbps": round(gbps["native"], 1),
            "fraction_of_copy": round(gbps["generic"] / copy_gbps, 3),
            "meets_target": gbps["generic"] / copy_gbps >= BANDWIDTH_TARGET}


def mm_row() -> dict[str, Any]:
    """Generic mm vs torch.mm in bf16 at 4096^3."""
    spec = OPS["mm"]
    case = Case((4096, 4096, 4096))
    gen = torch.Generator(device="cuda").manual_seed(0)
    (a, b), _ = spec.make_inputs(case, torch.bfloat16, torch.device("cuda"), gen)
    assert spec.generic is not None
    generic = spec.generic
    m = timing.bench({"generic": lambda: generic(a, b), "cublas": lambda: torch.mm(a, b)})
    tflops = {k: spec.flops(case) / (timing.summary(v)["median"] * 1e-6) / 1e12
              for k, v in m.samples.items()}
    return {"op": "mm", "case": case.id, "dtype": "bfloat16",
            "generic_tflops": round(tflops["generic"], 1),
            "cublas_tflops": round(tflops["cublas"], 1),
            "fraction_of_cublas": round(tflops["generic"] / tflops["cublas"], 3),
            "meets_target": tflops["generic"] / tflops["cublas"] >= MM_TARGET}


def markdown(result: dict[str, Any]) -> str:
    """The RESULTS.md tables."""
    dev = result["device"]
    lines = [f"{dev['name']} (sm {dev['capability']}, {dev['multiprocessors']} SMs), "
             f"{result['date']}, torch {result['torch']}, triton {result['triton']}; "
             f"measured copy bandwidth {result['copy_gbps']:.0f} GB/s (read + write)", "",
             "| op | shape | dtype | generic GB/s | torch GB/s | generic / copy | >= 85% |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in result["memory_bound"]:
        lines.append(f"| {r['op']} | {r['case']} | {r['dtype']} | {r['generic_gbps']:.0f} | "
                     f"{r['native_gbps']:.0f} | {r['fraction_of_copy']:.1%} | "
                     f"{'yes' if r['meets_target'] else 'NO'} |")
    mm = result["mm"]
    lines += ["", "| op | shape | dtype | generic TFLOP/s | cuBLAS TFLOP/s | generic / cuBLAS "
              "| >= 70% |", "| --- | --- | --- | --- | --- | --- | --- |",
              f"| mm | {mm['case']} | bf16 | {mm['generic_tflops']:.0f} | "
              f"{mm['cublas_tflops']:.0f} | {mm['fraction_of_cublas']:.1%} | "
              f"{'yes' if mm['meets_target'] else 'NO'} |"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Measure, print the tables, optionally write JSON/Markdown."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json")
    parser.add_argument("--markdown")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("bench_kernels: needs a CUDA device (nothing measured)", file=sys.stderr)
        return 2
    copy_gbps = copy_bandwidth()
    result = {"device": timing.device_metadata(), "torch": torch.__version__,
              "triton": triton.__version__, "date": datetime.date.today().isoformat(),
              "copy_gbps": copy_gbps,
              "memory_bound": [_row(op, case, dt, copy_gbps) for op, case, dt in MEMORY_BOUND],
              "mm": mm_row()}
    text = markdown(result)
    print(text)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    if args.markdown:
        Path(args.markdown).write_text(text, encoding="utf-8")
    ok = all(r["meets_target"] for r in result["memory_bound"]) and result["mm"]["meets_target"]
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
