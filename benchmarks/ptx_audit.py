"""Registers, spills and 2-byte accesses of the mm launches the rules make, compiled ahead of
time for sm_90: what the compiler makes of each launch, without a GPU.

Run (flagbot installed, no accelerator needed):
    python benchmarks/ptx_audit.py [--results FILE] [--limit N] [--workers W] [--json OUT]
For each mm row of a bench_kernels results file, mm() is called on empty CPU tensors of the
row's shape, dtype and layout with its kernels replaced by recorders, so nothing is computed
and the launch is the one the rules pick. Each distinct launch (constants, the integers a
launch marks as multiples of 16, warps, stages) is compiled for sm_90 (`aot_ptx.compile_one`)
and ptxas reports registers and spills. Prints the launches that spill or move 16-bit data in
2-byte steps, worst row first: a mask against a bound the compiler cannot see divides by 8, or
an operand read in place with odd row steps, costs there. The arguments' pointer type is the
operands' (a split's fp32 partial sums are compiled as the operands' type too).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import aot_ptx  # noqa: E402 - the benchmark's own folder, found by path
import bench_kernels  # noqa: E402
from bench_mm_tiles import DTYPES, result_rows  # noqa: E402

from flagbot.kernels.ops import mm as mm_module  # noqa: E402
from flagbot.kernels.spec import Case  # noqa: E402

POINTERS = {torch.float16: "*fp16", torch.bfloat16: "*bf16", torch.float32: "*fp32"}
KERNELS = ("_mm_kernel", "_gemv_kernel")
NARROW_LOADS = re.compile(r"ld\.global\.b16")
NARROW_STORES = re.compile(r"st\.global\.b16")
WIDE = re.compile(r"(?:ld|st)\.global\.v4\.b32|cp\.async\.cg\.shared\.global")


class _Recorder:
    """Stands in for a Triton kernel: records each launch's arguments, runs nothing."""

    def __init__(self, name: str, kernel: Any, launches: list[tuple[str, Any, dict[str, Any]]]):
        self.name, self.arg_names, self.launches = name, kernel.arg_names, launches

    def __getitem__(self, grid: Any) -> Any:
        def launch(*args: Any, **kwargs: Any) -> None:
            # the leading names only: the constants come as keywords
            named = dict(zip(self.arg_names, args, strict=False))
            self.launches.append((self.name, named, kwargs))
        return launch


def launch_spec(name: str, args: dict[str, Any], kwargs: dict[str, Any],
                dtype: torch.dtype) -> dict[str, Any]:
    """The aot_ptx spec of one recorded launch, specialised as a launch would be: integers
    equal to 1 become constants, multiples of 16 are marked."""
    constexprs = {k: v for k, v in kwargs.items() if k not in ("num_warps", "num_stages")}
    divisible = []
    for arg, value in args.items():
        if isinstance(value, bool) or not isinstance(value, int):
            continue
        if value == 1:
            constexprs[arg] = 1
        elif value % 16 == 0:  # 0 too, as the launcher marks it
            divisible.append(arg)
    return {"kernel": f"flagbot.kernels.ops.mm:{name}", "pointer": POINTERS[dtype],
            "warps": kwargs.get("num_warps", 4), "stages": kwargs.get("num_stages", 3),
            "divisible": sorted(divisible), "constexprs": constexprs}


def capture(rows: Iterable[tuple[Case, torch.dtype, str, str]]) -> dict[str, dict[str, Any]]:
    """{spec key: {"spec", "rows"}} of the launches mm() makes for (case, dtype, layout, label)
    rows, label naming the row in the report."""
    launches: list[tuple[str, Any, dict[str, Any]]] = []
    saved = {name: getattr(mm_module, name) for name in KERNELS}
    saved_sum = mm_module.sum_partials
    out: dict[str, dict[str, Any]] = {}
    try:
        for name in KERNELS:
            setattr(mm_module, name, _Recorder(name, saved[name], launches))
        mm_module.sum_partials = lambda *args, **kwargs: None  # type: ignore[assignment]
        for case, dtype, layout, label in rows:
            m, n, k = case.shape
            a = bench_kernels._layout(torch.empty((m, k), dtype=dtype), layout)
            b = bench_kernels._layout(torch.empty((k, n), dtype=dtype), layout)
            launches.clear()
            mm_module.mm(a, b)
            for name, args, kwargs in launches:
                spec = launch_spec(name, args, kwargs, dtype)
                entry = out.setdefault(json.dumps(spec, sort_keys=True),
                                       {"spec": spec, "rows": []})
                entry["rows"].append(label)
    finally:
        for name, kernel in saved.items():
            setattr(mm_module, name, kernel)
        mm_module.sum_partials = saved_sum
    return out


def examine(spec: dict[str, Any]) -> dict[str, Any]:
    """Registers, spills, and global accesses by width of one compiled launch (counted in the
    code, not as run: a K tail compiled in but never reached counts too)."""
    ptx = aot_ptx.compile_one(spec)
    report = aot_ptx.ptxas_report(ptx) or {"registers": -1, "spill_stores": -1}
    return {**report, "narrow_loads": len(NARROW_LOADS.findall(ptx)),
            "narrow_stores": len(NARROW_STORES.findall(ptx)),
            "wide_accesses": len(WIDE.findall(ptx))}


def suspect(found: dict[str, Any]) -> bool:
    """Worth a look: spills, 2-byte stores (the output is always written), or 2-byte loads
    with no 16-byte access at all (a 2-byte load alone may be a K tail that never runs)."""
    return bool(found["spill_stores"] > 0 or found["narrow_stores"]
                or (found["narrow_loads"] and not found["wide_accesses"]))


def describe(spec: dict[str, Any]) -> str:
    c = spec["constexprs"]
    kernel = spec["kernel"].split(":")[1]
    if kernel == "_gemv_kernel":
        tile = f"gemv {c['BLOCK_R']}x{c['BLOCK_K']}"
    else:
        tile = f"mm {c['BLOCK_M']}x{c['BLOCK_N']}x{c['BLOCK_K']}"
    aligns = " ".join(f"{k[6:]}={v}" for k, v in sorted(c.items()) if k.startswith("ALIGN_"))
    return f"{tile}/w{spec['warps']}s{spec['stages']} {spec['pointer'][1:]} {aligns}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--results", type=Path,
                   default=Path(__file__).parent / "results"
                   / "kernels-h100-2026-11-27-rules4.json.gz")
    p.add_argument("--limit", type=int, help="the first N mm rows only")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    rows = [r for r in result_rows(args.results) if r["op"] == "mm"][: args.limit]
    specs = capture((Case(tuple(int(x) for x in r["case"].split("x"))), DTYPES[r["dtype"]],
                     r["layout"], f"{r['case']} {r['dtype']} {r['layout']} "
                     f"{r.get('vs_torch', float('nan')):.2f}x") for r in rows)
    print(f"{len(rows)} mm rows, {len(specs)} distinct launches; compiling for sm_90",
          file=sys.stderr, flush=True)
    entries = list(specs.values())
    with ProcessPoolExecutor(args.workers) as pool:
        found = list(pool.map(examine, [e["spec"] for e in entries]))
    report = [{**e, **f} for e, f in zip(entries, found, strict=True)]
    if args.json:
        args.json.write_text(json.dumps(report), encoding="utf-8")
    bad = [r for r in report if suspect(r)]
    worst = sorted(bad, key=lambda r: min(float(x.split()[-1][:-1]) for x in r["rows"]))
    print("| launch | registers | spill bytes | 2-byte loads / stores | 16-byte | rows (x torch) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in worst:
        shown = ", ".join(r["rows"][:3]) + (f" (+{len(r['rows']) - 3})" if len(r["rows"]) > 3
                                            else "")
        print(f"| {describe(r['spec'])} | {r['registers']} | {r['spill_stores']} | "
              f"{r['narrow_loads']} / {r['narrow_stores']} | {r['wide_accesses']} | {shown} |")
    spilling = sum(r["spill_stores"] > 0 for r in report)
    print(f"{len(report)} launches: {spilling} spill; {len(bad)} in the table", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
