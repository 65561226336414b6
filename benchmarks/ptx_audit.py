"""Registers, spills and 2-byte accesses of the launches the rules make, compiled ahead of time
for sm_90: what the compiler makes of each launch, without a GPU.

Run (flagbot installed, no accelerator needed):
    python benchmarks/ptx_audit.py [--results FILE] [--ops mm,softmax,...] [--limit N]
                                   [--workers W] [--json OUT] [--launches OUT]
For each row of a bench_kernels results file (mm's by default), the generic op is called on
empty CPU tensors of the row's case, dtype and layout with every kernel of the ops package
replaced by a recorder, so nothing is computed and the launches are the ones the rules pick. Each distinct launch (constants, the integers a
launch marks as multiples of 16, warps, stages) is compiled for sm_90 (`aot_ptx.compile_one`)
and ptxas reports registers and spills. Prints the launches that spill or move 16-bit data in
2-byte steps, worst row first: a mask against a bound the compiler cannot see divides by 8, or
an operand read in place with odd row steps, costs there. A launch whose inputs are the
outputs of an earlier one (a split's partial sums) is compiled with those buffers' types.
"""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import re
import sys
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import torch
from triton.runtime.interpreter import InterpretedFunction
from triton.runtime.jit import JITFunction

sys.path.insert(0, str(Path(__file__).resolve().parent))
import aot_ptx  # noqa: E402 - the benchmark's own folder, found by path
import bench_kernels  # noqa: E402
from bench_kernels import parse_case  # noqa: E402
from bench_mm_tiles import DTYPES, result_rows  # noqa: E402

from flagbot.kernels import spec as spec_module  # noqa: E402
from flagbot.kernels.ops import _mm_tma  # noqa: E402
from flagbot.kernels.registry import OPS  # noqa: E402
from flagbot.kernels.spec import Case  # noqa: E402

POINTERS = {torch.float16: "*fp16", torch.bfloat16: "*bf16", torch.float32: "*fp32",
            torch.int32: "*i32"}
AUDITED = ("add", "mul", "gelu", "silu", "softmax", "log_softmax", "sum", "mean", "mm",
           "layer_norm", "rms_norm")  # the ops the sweeps time
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


def _ops_modules() -> list[ModuleType]:
    import flagbot.kernels.ops as ops

    return [importlib.import_module(f"{ops.__name__}.{info.name}")
            for info in pkgutil.iter_modules(ops.__path__)]


def _empty(shape: tuple[int, ...], dtype: torch.dtype, device: Any, gen: Any) -> torch.Tensor:
    return torch.empty(shape, dtype=dtype, device=device)


def _sm_90_has_tma() -> bool:
    return True


@contextmanager
def recording(launches: list[tuple[str, Any, dict[str, Any]]]) -> Iterator[None]:
    """Every kernel in the ops package's modules replaced by a recorder (under each name that
    binds it), and the inputs' random values by empty tensors; all put back after."""
    modules = _ops_modules() + [spec_module]
    saved: list[tuple[ModuleType, str, Any]] = []
    # the launches as on the sm_90 target the audit compiles for, whatever this host has:
    # tensor descriptors included
    saved.append((_mm_tma, "target_has_tma", _mm_tma.target_has_tma))
    _mm_tma.target_has_tma = _sm_90_has_tma
    for module in modules:
        for name, value in list(vars(module).items()):
            # (on the CPU interpreter, which the tests run, kernels are InterpretedFunctions)
            if isinstance(value, JITFunction | InterpretedFunction):
                key = f"{value.fn.__module__}:{value.fn.__name__}"
                saved.append((module, name, value))
                setattr(module, name, _Recorder(key, value, launches))
            elif name == "randn" and callable(value):
                saved.append((module, name, value))
                setattr(module, name, _empty)
    try:
        yield
    finally:
        for module, name, value in saved:
            setattr(module, name, value)


def launch_spec(name: str, args: dict[str, Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The aot_ptx spec of one recorded launch, specialised as a launch would be: integers
    equal to 1 become constants, multiples of 16 (0 too, as the launcher marks it) are
    marked; tensors are pointers of their dtype, floats fp32."""
    constexprs = {k: v for k, v in kwargs.items() if k not in ("num_warps", "num_stages")}
    divisible, types = [], {}
    for arg, value in args.items():
        if isinstance(value, torch.Tensor):
            types[arg] = POINTERS[value.dtype]
        elif _mm_tma.TensorDescriptor is not None and isinstance(value, _mm_tma.TensorDescriptor):
            block = ", ".join(map(str, value.block_shape))
            types[arg] = f"tensordesc<{POINTERS[value.base.dtype][1:]}[{block}]>"
        elif isinstance(value, float):
            types[arg] = "fp32"
        elif isinstance(value, bool) or not isinstance(value, int):
            continue
        elif value == 1:
            constexprs[arg] = 1
        elif value % 16 == 0:
            divisible.append(arg)
    pointer = next((t for t in types.values() if t.startswith("*")), "*fp32")
    return {"kernel": name, "pointer": pointer, "types": types,
            "warps": kwargs.get("num_warps", 4), "stages": kwargs.get("num_stages", 3),
            "divisible": sorted(divisible), "constexprs": constexprs}


def capture(rows: Iterable[tuple[str, Case, torch.dtype, str, str]]
            ) -> dict[str, dict[str, Any]]:
    """{spec key: {"spec", "rows"}} of the launches the generic ops make for (op, case, dtype,
    layout, label) rows, label naming the row in the report."""
    launches: list[tuple[str, Any, dict[str, Any]]] = []
    out: dict[str, dict[str, Any]] = {}
    with recording(launches):
        for op, case, dtype, layout, label in rows:
            spec = OPS[op]
            args, kwargs = spec.make_inputs(case, dtype, torch.device("cpu"), None)
            args = tuple(bench_kernels._layout(a, layout) for a in args)
            launches.clear()
            assert spec.generic is not None
            spec.generic(*args, **kwargs)
            for name, named, launch_kwargs in launches:
                found = launch_spec(name, named, launch_kwargs)
                entry = out.setdefault(json.dumps(found, sort_keys=True),
                                       {"spec": found, "rows": []})
                entry["rows"].append(label)
    return out


def examine(spec: dict[str, Any]) -> dict[str, Any]:
    """Registers, spills (None where no ptxas here reads the PTX), and global accesses by
    width of one compiled launch (counted in the code, not as run: a K tail compiled in but
    never reached counts too); {"error": ...} where it does not compile."""
    try:
        ptx = aot_ptx.compile_one(spec)
    except Exception as exc:  # noqa: BLE001 - reported per launch, the others still examined
        return {"error": f"{type(exc).__name__}: {exc}"[:500]}
    report = aot_ptx.ptxas_report(ptx) or {"registers": None, "spill_stores": None}
    return {**report, "narrow_loads": len(NARROW_LOADS.findall(ptx)),
            "narrow_stores": len(NARROW_STORES.findall(ptx)),
            "wide_accesses": len(WIDE.findall(ptx))}


def suspect(found: dict[str, Any]) -> bool:
    """Worth a look: spills, 2-byte stores (the output is always written), or 2-byte loads
    with no 16-byte access at all (a 2-byte load alone may be a K tail that never runs)."""
    return bool((found["spill_stores"] or 0) > 0 or found["narrow_stores"]
                or (found["narrow_loads"] and not found["wide_accesses"]))


def describe(spec: dict[str, Any]) -> str:
    c = spec["constexprs"]
    blocks = "x".join(str(v) for k, v in c.items() if k.startswith("BLOCK") or k == "ROWS")
    aligns = " ".join(f"{k[6:]}={v}" for k, v in sorted(c.items()) if k.startswith("ALIGN"))
    return (f"{spec['kernel'].split(':')[1]} {blocks}/w{spec['warps']}s{spec['stages']} "
            f"{spec['pointer'][1:]} {aligns}").rstrip()


def row_name(r: dict[str, Any]) -> str:
    """A results row as `op case dtype layout`: what it measures, the same in any tree."""
    return f"{r['op']} {r['case']} {r['dtype']} {r['layout']}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--results", type=Path,
                   default=Path(__file__).parent / "results"
                   / "kernels-h100-2026-11-27-rules4.json.gz")
    p.add_argument("--ops", default="mm", help=f"comma-separated, of {','.join(AUDITED)}")
    p.add_argument("--limit", type=int, help="the first N rows only")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--json", type=Path)
    p.add_argument("--launches", type=Path,
                   help="compile nothing: write {row: its launches} as JSON here (what "
                        "ab_rows.py --changed compares between two trees)")
    args = p.parse_args(argv)
    ops = args.ops.split(",")
    unknown = sorted(set(ops) - set(AUDITED))
    if unknown:
        p.error(f"--ops: {', '.join(unknown)} not among {', '.join(AUDITED)}")
    if not args.results.is_file():
        p.error(f"--results: no such file {args.results}")
    rows = [r for r in result_rows(args.results) if r["op"] in ops][: args.limit]
    if not rows:
        p.error(f"no rows of {args.ops} in {args.results}")
    # each row's label, and its ratio to torch (the report lists the slowest rows first)
    labels = [f"{r['op']} {r['case']} {r['dtype']} {r['layout']} "
              f"{r.get('vs_torch', float('nan')):.2f}x" for r in rows]
    ratio = {label: r.get("vs_torch", float("inf")) for label, r in zip(labels, rows,
                                                                         strict=True)}
    if args.launches:
        names = [row_name(r) for r in rows]
        per_row: dict[str, list[str]] = {name: [] for name in names}
        for key, entry in capture((r["op"], parse_case(r["case"]), DTYPES[r["dtype"]],
                                   r["layout"], name) for r, name in zip(rows, names,
                                                                         strict=True)).items():
            for name in entry["rows"]:
                per_row[name].append(key)
        args.launches.write_text(json.dumps({k: sorted(v) for k, v in per_row.items()}),
                                 encoding="utf-8")
        print(f"{len(rows)} rows' launches written to {args.launches}", file=sys.stderr)
        return 0
    specs = capture((r["op"], parse_case(r["case"]), DTYPES[r["dtype"]], r["layout"], label)
                    for r, label in zip(rows, labels, strict=True))
    print(f"{len(rows)} rows of {','.join(ops)}, {len(specs)} distinct launches; compiling "
          "for sm_90", file=sys.stderr, flush=True)
    entries = list(specs.values())
    with ProcessPoolExecutor(args.workers) as pool:
        found = list(pool.map(examine, [e["spec"] for e in entries]))
    report = [{**e, **f} for e, f in zip(entries, found, strict=True)]
    if args.json:
        args.json.write_text(json.dumps(report), encoding="utf-8")
    failed = [r for r in report if "error" in r]
    report = [r for r in report if "error" not in r]
    bad = [r for r in report if suspect(r)]
    worst = sorted(bad, key=lambda r: min(ratio[label] for label in r["rows"]))
    print("| launch | registers | spill bytes | 2-byte loads / stores | 16-byte | rows (x torch) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in worst:
        shown = ", ".join(r["rows"][:3]) + (f" (+{len(r['rows']) - 3})" if len(r["rows"]) > 3
                                            else "")
        unread = r["registers"] is None
        print(f"| {describe(r['spec'])} | {'?' if unread else r['registers']} | "
              f"{'?' if unread else r['spill_stores']} | "
              f"{r['narrow_loads']} / {r['narrow_stores']} | {r['wide_accesses']} | {shown} |")
    spilling = sum((r["spill_stores"] or 0) > 0 for r in report)
    print(f"{len(report)} launches: {spilling} spill; {len(bad)} in the table", file=sys.stderr)
    if any(r["registers"] is None for r in report):
        print("ptx_audit: no ptxas in Triton's wheel here reads the PTX it writes: registers "
              "and spills are not reported (a Triton whose wheel ships a matching ptxas does)",
              file=sys.stderr)
    for r in failed:
        print(f"ptx_audit: {describe(r['spec'])} did not compile ({r['error']}); rows: "
              f"{', '.join(r['rows'][:3])}", file=sys.stderr)
    if failed:
        print(f"ptx_audit: {len(failed)} launches did not compile (above): a kernel and the "
              "launch the rules make for it disagree, or this Triton cannot compile for sm_90",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
