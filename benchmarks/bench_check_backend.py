"""Time `flagbot check-backend --all` on a generated FlagGems-like tree (target: under 1 s).

    .venv/bin/python benchmarks/bench_check_backend.py [--vendors 16] [--ops 450] [--repeat 5]
    .venv/bin/python benchmarks/bench_check_backend.py --tree FLAGGEMS_CHECKOUT [--folder _nvidia]

Builds, in a temporary directory, a flag_gems package with the generic ops and a vendors enum,
and under its runtime/backend/ N vendors in the current FlagGems form, each with M op modules
(ops/__init__.py imports + __all__), CUSTOMIZED_UNUSED_OPS, heuristics, tune configs and an arch
folder. Reports the in-process time (median) and a cold `python -m` run, and checks that torch
was not imported. `--tree` times a real FlagGems checkout instead (its findings are reported,
not failed on); `--folder` checks one vendor folder of it, as the pre-commit hook does.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = "src/flag_gems/runtime/backend"


def op_names(count: int) -> list[str]:
    return [f"op{i:04d}" for i in range(count)]


def write_flaggems(dest: Path, vendors: list[str], ops: list[str]) -> None:
    pkg = dest / "src/flag_gems"
    (pkg / "ops").mkdir(parents=True)
    (pkg / "fused").mkdir()
    (pkg / "runtime/backend").mkdir(parents=True)
    entries = "".join(f'    ("{op}", {op}),\n' for op in ops)
    (pkg / "__init__.py").write_text(f"from flag_gems.ops import *\n\n_FULL_CONFIG = (\n{entries})\n")
    for op in ops:
        (pkg / "ops" / f"{op}.py").write_text(
            f"from flag_gems import runtime\n\nCFG = runtime.get_tuned_config(\"{op}\")\n\n\n"
            f"def {op}(x):\n    return x\n")
    (pkg / "ops/__init__.py").write_text("".join(f"from .{op} import {op}\n" for op in ops))
    members = "".join(f"    {v.upper()} = {i}\n" for i, v in enumerate(vendors))
    (pkg / "runtime/common.py").write_text(f"from enum import Enum\n\n\nclass vendors(Enum):\n{members}")


def write_vendor(folder: Path, vendor: str, ops: list[str]) -> None:
    (folder / "ops").mkdir(parents=True)
    (folder / "__init__.py").write_text(
        "from backend_utils import VendorDescriptor\n\n"
        f'vendor_info = VendorDescriptor(vendor_name="{vendor}", device_name="{vendor}", '
        f'device_query_cmd="{vendor}-smi", dispatch_key="PrivateUse1")\n\n'
        'ARCH_MAP = {"2": "gen2"}\n\n'
        f'CUSTOMIZED_UNUSED_OPS = ("{ops[0]}", "{ops[1]}")\n')
    heur = "".join(f'    "{op}": {{"BLOCK": lambda args: 1024, "num_warps": warps}},\n' for op in ops[:60])
    (folder / "heuristics_config_utils.py").write_text(
        f"def warps(args):\n    return 4\n\n\nHEURISTICS_CONFIGS = {{\n{heur}}}\n")
    tune = "".join(f"{op}:\n  - META:\n      BLOCK: 128\n    num_warps: 4\n    num_stages: 2\n"
                   f"  - gen: true\n    param_map:\n      META:\n        BLOCK: blocks\n"
                   f"      num_warps: warps\n    blocks: [256, 512]\n    warps: [4, 8]\n"
                   for op in ops[:120])
    (folder / "tune_configs.yaml").write_text(tune)
    for op in ops:
        (folder / "ops" / f"{op}.py").write_text(
            f"import triton\n\n\n@triton.jit\ndef {op}_kernel(x):\n    pass\n\n\n"
            f"def {op}(x):\n    return {op}_kernel(x)\n")
    imports = "".join(f"from .{op} import {op}\n" for op in ops)
    names = "".join(f'    "{op}",\n' for op in ops)
    (folder / "ops/__init__.py").write_text(f"{imports}\n__all__ = [\n{names}]\n")
    arch = folder / "gen2"
    (arch / "ops").mkdir(parents=True)
    (arch / "__init__.py").write_text("from .heuristics_config_utils import HEURISTICS_CONFIGS\n")
    (arch / "heuristics_config_utils.py").write_text("HEURISTICS_CONFIGS = {}\n")
    (arch / "ops/__init__.py").write_text(f"from .{ops[2]} import {ops[2]}\n")
    (arch / "ops" / f"{ops[2]}.py").write_text(f"def {ops[2]}(x):\n    return x\n")


def build(dest: Path, n_vendors: int, n_ops: int) -> None:
    vendors = [f"vendor{i:02d}" for i in range(n_vendors)]
    ops = op_names(n_ops)
    write_flaggems(dest, vendors, ops)
    for vendor in vendors:
        write_vendor(dest / ROOT / f"_{vendor}", vendor, ops)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vendors", type=int, default=16)
    parser.add_argument("--ops", type=int, default=450)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=0, help="worker processes (0: as the CLI)")
    parser.add_argument("--tree", type=Path, help="a real FlagGems checkout to time instead")
    parser.add_argument("--folder", help="with --tree: one vendor folder (_nvidia), as pre-commit")
    args = parser.parse_args()
    from flagbot.hooks.check_vendor_backend import check_backends, default_jobs

    folders = [f"{ROOT}/{args.folder}"] if args.folder else None
    target = ["--", folders[0]] if folders else ["--all"]
    with tempfile.TemporaryDirectory() as tmp:
        repo = args.tree.resolve() if args.tree else Path(tmp)
        if not args.tree:
            build(repo, args.vendors, args.ops)
        times, findings = [], []
        for _ in range(args.repeat):
            start = time.perf_counter()
            findings = check_backends(repo, folders, root=ROOT, jobs=args.jobs or default_jobs())
            times.append(time.perf_counter() - start)
        errors = [f for f in findings if f.severity == "error"]
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "flagbot.hooks.check_vendor_backend", "--root", ROOT,
                               "--jobs", str(args.jobs or default_jobs()), *target],
                              cwd=repo, capture_output=True, text=True)
        cold = time.perf_counter() - start
    what = f"{args.tree} {args.folder or '--all'}" if args.tree else f"{args.vendors} vendors x {args.ops} ops"
    print(f"{what}, jobs={args.jobs or default_jobs()}: in-process median {statistics.median(times):.3f} s "
          f"(min {min(times):.3f}, max {max(times):.3f}); cold `python -m` run {cold:.3f} s "
          f"(exit {proc.returncode}); findings {len(findings)} ({len(errors)} errors); "
          f"torch imported: {'torch' in sys.modules}")
    if args.tree:
        return 1 if "torch" in sys.modules or proc.returncode not in (0, 1) else 0
    if errors or proc.returncode != 0 or "torch" in sys.modules:
        print("\n".join(f.render() for f in errors[:10]) or proc.stdout[-2000:] + proc.stderr[-2000:])
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
