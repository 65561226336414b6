"""Host-side planning cost of the generic kernels: the Python that runs before every launch.

Run: python benchmarks/bench_host_plan.py [--calls N]
No GPU needed: this is Python alone. Prints microseconds per call of Triton's `cdiv` and
`next_power_of_2` against the plain helpers the kernels use (kernels/ops/_host.py), and of
mm's and GEMV's configuration choice for a split-K product and a large square. Launch-inclusive
timing (what users pay without CUDA graphs) adds this to every call where it outlasts the
device's work; results in benchmarks/RESULTS.md ("Host-side planning").
"""
from __future__ import annotations

import argparse
import platform
import sys
import timeit
from collections.abc import Callable

import torch
import triton

from flagbot.kernels.ops import _host
from flagbot.kernels.ops._rows import alignment
from flagbot.kernels.ops.mm import gemv_config, mm_config


def per_call_us(fn: Callable[[], object], calls: int) -> float:
    return min(timeit.repeat(fn, number=calls, repeat=5)) / calls * 1e6


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=20000)
    args = p.parse_args(argv)
    f16 = torch.float16
    cases: list[tuple[str, Callable[[], object]]] = [
        ("triton.cdiv", lambda: triton.cdiv(2047, 64)),
        ("_host.cdiv", lambda: _host.cdiv(2047, 64)),
        ("triton.next_power_of_2", lambda: triton.next_power_of_2(2047)),
        ("_host.next_power_of_2", lambda: _host.next_power_of_2(2047)),
        ("alignment(4095, 8191)", lambda: alignment(4095, 8191)),
        ("mm_config 512x332x2048 fp16 (split K)", lambda: mm_config(512, 332, 2048, f16)),
        ("mm_config 4096^3 fp16", lambda: mm_config(4096, 4096, 4096, f16)),
        ("gemv_config 1001 rows, K 30011 (split K)",
         lambda: gemv_config(1001, 30011, f16, k_contiguous=False)),
    ]
    print(f"Python {platform.python_version()}, Triton {triton.__version__}, "
          f"{platform.processor() or platform.machine()}")
    print("| call | us |\n| --- | --- |")
    for name, fn in cases:
        print(f"| {name} | {per_call_us(fn, args.calls):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
