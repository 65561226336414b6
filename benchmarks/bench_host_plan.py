"""Host-side planning cost of the generic kernels: the Python that runs before every launch.

Run: python benchmarks/bench_host_plan.py [--calls N] [--ops [--no-memo] [--device cuda --launch]]
No GPU needed: this is Python alone. Prints microseconds per call of Triton's `cdiv` and
`next_power_of_2` against the plain helpers the kernels use (kernels/ops/_host.py), and of
mm's and GEMV's configuration choice for a split-K product and a large square. Launch-inclusive
timing (what users pay without CUDA graphs) adds this to every call where it outlasts the
device's work; results in benchmarks/RESULTS.md ("Host-side planning").

`--ops` times each generic op's whole host path instead (`--no-memo`: mm picking its tiles
every call, as before it remembered them), on small CPU tensors of the shapes
whose launch-inclusive times read far over their device times on the H100s, with Triton's
launcher replaced by a recorder for the duration: what the op's own Python costs before
Triton takes over (Triton's launch, which needs the device, is not in the figure), and which
kernels it launches.
"""
from __future__ import annotations

import argparse
import functools
import platform
import sys
import timeit
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch
import triton
from triton.runtime.jit import KernelInterface

from flagbot.kernels.device import Device, DeviceUnavailable, resolve
from flagbot.kernels.ops import _host, _mm_memo
from flagbot.kernels.ops._rows import alignment
from flagbot.kernels.ops.mm import gemv_config, mm_config
from flagbot.kernels.registry import OPS
from flagbot.kernels.spec import Case

# (op, shape, params, dtype, layout): the strided elementwise path (slices, broadcasts), the
# flat one, and the other ops' small rows, all shapes of the H100 random sweeps.
F16, F32, BF16 = torch.float16, torch.float32, torch.bfloat16
OP_ROWS: list[tuple[str, tuple[int, ...], dict[str, object], torch.dtype, str]] = [
    ("add", (1 << 20,), {}, F16, "contiguous"),
    ("gelu", (512047,), {}, F32, "contiguous"),
    ("add", (2, 151, 513), {}, F16, "slice"),
    ("add", (37, 5431), {"broadcast": 1}, F16, "contiguous"),
    ("mul", (4096, 1), {"broadcast": 1}, F32, "contiguous"),
    ("add", (125, 33), {"broadcast": 1}, BF16, "t"),
    ("silu", (17, 4663), {}, BF16, "slice"),
    ("softmax", (2048, 4096), {}, F16, "contiguous"),
    ("softmax", (853, 11), {"dim": 0}, F16, "contiguous"),
    ("layer_norm", (129, 256), {}, F32, "contiguous"),
    ("rms_norm", (129, 256), {}, F32, "contiguous"),
    ("sum", (257, 162), {"dim": 0}, F32, "contiguous"),
    ("mean", (2081, 7), {"dim": 0}, BF16, "contiguous"),
    ("mm", (79, 289, 127), {}, F16, "contiguous"),
    ("mm", (384, 223, 2077), {}, F16, "contiguous"),
    ("mm", (1, 1001, 3001), {}, BF16, "contiguous"),
    # host-bound in the H200 record: a split and its partial sums, no copies
    ("mm", (13, 2441, 256), {}, BF16, "contiguous"),
]


def per_call_us(fn: Callable[[], object], calls: int) -> float:
    return min(timeit.repeat(fn, number=calls, repeat=5)) / calls * 1e6


@contextmanager
def launches_recorded() -> Iterator[list[str]]:
    """`kernel[grid](...)` records the kernel's name instead of launching it, for the block
    (compiled and interpreted kernels alike: both launch through KernelInterface)."""
    names: list[str] = []
    real = KernelInterface.__getitem__

    def record(self: KernelInterface[Any], grid: object) -> Callable[..., None]:
        return lambda *args, **kwargs: names.append(self.fn.__name__)  # type: ignore[attr-defined]

    KernelInterface.__getitem__ = record  # type: ignore[method-assign,assignment]
    try:
        yield names
    finally:
        KernelInterface.__getitem__ = real  # type: ignore[method-assign]


def back_to_back_us(fn: Callable[[], object], calls: int, dev: Device) -> float:
    """Per call, `calls` calls back to back then one synchronisation, best of 5: for kernels
    shorter than their launch path the device waits on the host, so this is the host's time
    per call, launch included."""
    def batch() -> None:
        for _ in range(calls):
            fn()
        dev.synchronize()

    batch()
    return min(timeit.repeat(batch, number=1, repeat=5)) / calls * 1e6


def op_rows(calls: int, dev: Device, launch: bool) -> None:
    import bench_kernels  # the benchmark's own folder: its inputs and layouts

    print("| op | shape | dtype | layout | us before Triton's launch | kernels launched | "
          "us a call, launched | torch, us a call |\n| --- | --- | --- | --- | --- | --- | --- "
          "| --- |")
    for op, shape, params, dtype, layout in OP_ROWS:
        row = bench_kernels.Row(op, Case(shape, params), dtype, layout)
        args, kwargs = bench_kernels.inputs(row, dev)
        generic = functools.partial(OPS[op].generic, *args, **kwargs)
        reference = functools.partial(OPS[op].reference, *args, **kwargs)
        with launches_recorded() as names:
            generic()
            launched = ", ".join(names)
            us = per_call_us(generic, calls)
        real = torch_us = "-"
        if launch:
            real = f"{back_to_back_us(generic, calls, dev):.2f}"
            torch_us = f"{back_to_back_us(reference, calls, dev):.2f}"
        print(f"| {op} | {row.case.id} | {str(dtype)[6:]} | {layout} | {us:.2f} | {launched} | "
              f"{real} | {torch_us} |")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=20000)
    p.add_argument("--ops", action="store_true",
                   help="each generic op's whole host path (Triton's launch left out)")
    p.add_argument("--device", default="cpu",
                   help="--ops: where the inputs live (default cpu; cuda, npu, ... on a device)")
    p.add_argument("--no-memo", action="store_true",
                   help="--ops: mm picks its configuration every call instead of remembering "
                        "it per operand geometry (kernels/ops/_mm_memo.py)")
    p.add_argument("--launch", action="store_true",
                   help="--ops on a device: also time real launches back to back, generic "
                        "and torch")
    args = p.parse_args(argv)
    if args.ops:
        if args.no_memo:
            _mm_memo.MAX_ENTRIES = 0
        try:
            dev = resolve(args.device)
        except DeviceUnavailable as exc:
            p.error(str(exc))
        if args.launch and not dev.timed:
            p.error(f"--launch needs a device that runs compiled kernels, not {dev.type} "
                    "(Triton's CPU interpreter would be timed)")
        print(f"Python {platform.python_version()}, Triton {triton.__version__}, torch "
              f"{torch.__version__}, {platform.processor() or platform.machine()}, inputs on "
              f"{dev.torch_device}")
        op_rows(args.calls, dev, args.launch)
        return 0
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
