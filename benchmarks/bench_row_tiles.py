"""Reduction and softmax launch tiles against each other, shape by shape, on an accelerator.

Run (flagbot installed): python benchmarks/bench_row_tiles.py [--results FILE] [--below R]
      [--against torch|flaggems] [--limit N] [--ops sum,mean,softmax,log_softmax,layer_norm,
      rms_norm] [--workers W] [--json OUT]
The rows of those ops in a bench_kernels results file under `--below` times torch (or FlagGems)
(worst first, `--limit` per op spread over the range), plus the fixed sweep's rows of those
ops as guards: per shape torch, the shape-picked launch and a grid of tiles (rows or columns per
program, tile length along the reduced dim, warps; for the norms the whole-row kernel's rows
and warps and the looped kernel's tile and warps), timed as bench_kernels times rows
(launch-inclusive and stall-hidden, interleaved). Prints per shape the best tile and its ratio
to torch; writes every time to the JSON file. The twin of bench_mm_tiles.py, whose compile-first
pass it shares: the rules in _reduce.py and _rows.py come from such runs.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import torch

from flagbot.kernels.device import Device, resolve
from flagbot.kernels.ops import _reduce
from flagbot.kernels.ops._host import next_power_of_2
from flagbot.kernels.ops._layout import as_contiguous_permutation
from flagbot.kernels.ops._reduce import ReduceConfig, reduce_dim
from flagbot.kernels.ops._rows import (
    MAX_ROW_BLOCK,
    LoopConfig,
    RowsConfig,
    norm_last_dims,
    softmax_any_dim,
)
from flagbot.kernels.registry import OPS
from flagbot.kernels.spec import Case

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_kernels  # noqa: E402 - the benchmark's own folder, found by path
from bench_kernels import parse_case  # noqa: E402
from bench_mm_tiles import (  # noqa: E402
    DTYPES,
    result_rows,
    spread,
    time_all,
    time_grid,
    timed_device,
    worst_spread,
)

OPS_TUNED = ("sum", "mean", "softmax", "log_softmax", "layer_norm", "rms_norm")
NORMS = ("layer_norm", "rms_norm")
Config = ReduceConfig | RowsConfig | LoopConfig
Shape = tuple[str, Case, torch.dtype, str]


def _reduce_inner(x: torch.Tensor, d: int) -> int:
    """The inner extent reduce_dim's main launch sees (1: the reduced dim is contiguous)."""
    if d == x.dim() - 1 and x.stride(-1) == 1:
        return 1
    found = _reduce.lines(x, d)
    if found is not None and found[2] > 1:
        return found[2]
    src, order = as_contiguous_permutation(x)
    inner = 1
    for size in src.shape[order.index(d) + 1:]:
        inner *= size
    return inner


def grid(op: str, x: torch.Tensor, d: int) -> list[Config]:
    """Every launch tried for one input: softmax rows per program x warps (rows that fit in
    registers); reductions over a contiguous dim rows x tile length x warps, over an earlier
    dim columns x rows of the reduced dim x warps."""
    r = x.shape[d]
    out: list[Config] = []
    if op in NORMS:
        # the whole row in registers (rows per program x warps) up to MAX_ROW_BLOCK, and the
        # looped kernel (tile x warps) over any row longer than its tile
        block = next_power_of_2(r)
        for rows in (1, 2, 4, 8, 16, 32, 64, 128, 256):
            for warps in (4, 8, 16):
                if block * rows <= MAX_ROW_BLOCK and 32 * warps <= max(128, block * rows // 4):
                    out.append(RowsConfig(rows, warps))
        for tile in (512, 1024, 2048, 4096, 8192):
            for warps in (4, 8, 16):
                if tile < block and 32 * warps <= tile:
                    out.append(LoopConfig(tile, warps))
        return out
    if op in ("softmax", "log_softmax"):
        block = next_power_of_2(r)
        if d != x.dim() - 1 or block > MAX_ROW_BLOCK:
            return out
        for rows in (1, 2, 4, 8, 16, 32, 64, 128):
            for warps in (1, 2, 4, 8, 16):
                if block * rows <= 16384 and 32 * warps <= max(32, block * rows):
                    out.append(RowsConfig(rows, warps))
        return out
    inner = _reduce_inner(x, d)
    np_r = next_power_of_2(r)
    if inner == 1:
        for block_r in sorted({min(np_r, 4096), min(np_r, 1024), min(np_r, 256)}):
            for rows in (1, 2, 4, 8, 16, 32, 64):
                for warps in (1, 2, 4, 8):
                    if block_r * rows <= 8192 and 32 * warps <= max(32, block_r * rows):
                        out.append(ReduceConfig(block_r, rows, warps))
        return out
    if inner <= 16:
        # narrow columns: one tile as wide as they are, up to the whole reduced dim deep
        block_i = next_power_of_2(inner)
        for block_r in (256, 512, 1024, 2048, 4096, 8192):
            if block_r <= max(256, np_r) and block_r * block_i <= 16384:
                for warps in (4, 8, 16):
                    out.append(ReduceConfig(block_r, block_i, warps))
    for block_i in (32, 64, 128, 256, 512, 1024):
        if block_i > max(32, 2 * next_power_of_2(inner)):
            continue
        for block_r in (1, 2, 4, 8, 16, 32, 64):
            if block_r > np_r or not 256 <= block_r * block_i <= 8192:
                continue
            for warps in (4, 8):
                out.append(ReduceConfig(block_r, block_i, warps))
    return out


def label(cfg: Config) -> str:
    if isinstance(cfg, RowsConfig):
        return f"rows{cfg.rows}/w{cfg.warps}"
    if isinstance(cfg, LoopConfig):
        return f"loop{cfg.tile}/w{cfg.warps}"
    return f"r{cfg.block_r}x{cfg.block_o}/w{cfg.warps}"


def call(op: str, args: tuple[Any, ...], kwargs: dict[str, Any],
         cfg: Config | None) -> Callable[[], Any]:
    if op in NORMS:
        x, shape, w, b = (*args, None) if op == "rms_norm" else args
        nc = cfg if isinstance(cfg, (RowsConfig, LoopConfig)) else None
        return lambda: norm_last_dims(op, x, shape, w, b, kwargs["eps"], rms=op == "rms_norm",
                                      config=nc)
    if op in ("softmax", "log_softmax"):
        x = args[0]
        return lambda: softmax_any_dim(op, x, kwargs.get("dim", -1), None,
                                       log=op == "log_softmax",
                                       config=cfg if isinstance(cfg, RowsConfig) else None)
    x, dims = args
    rc = cfg if isinstance(cfg, ReduceConfig) else None
    return lambda: reduce_dim(x, dims, False, op == "mean", None, config=rc)


def _dim(op: str, x: torch.Tensor, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    if op in NORMS:
        return x.dim() - 1
    d = kwargs.get("dim", -1) if op in ("softmax", "log_softmax") else args[1][0]
    return int(d) % x.dim()


def _inputs(shape: Shape, dev: Device) -> tuple[tuple[Any, ...], dict[str, Any]]:
    op, case, dtype, layout = shape
    return bench_kernels.inputs(bench_kernels.Row(op, case, dtype, layout), dev)


def from_results(path: Path, below: float, limit: int, ops: Iterable[str],
                 against: str = "torch") -> list[Shape]:
    """Each op's rows of a bench_kernels results file under `below` times torch (or FlagGems:
    `against`), `limit` per op (bench_mm_tiles.worst_spread)."""
    rows = result_rows(path)
    return [(op, parse_case(r["case"]), DTYPES[r["dtype"]], r["layout"])
            for op in ops for r in worst_spread(rows, op, below, limit, f"vs_{against}")]


def guards(ops: Iterable[str]) -> list[Shape]:
    wanted = set(ops)
    return [(row.op, row.case, row.dtype, row.layout) for row in bench_kernels.SWEEP
            if row.op in wanted]


def _compile(jobs: list[tuple[str, str, str, str]]) -> int:
    """Worker: run every shape once with each configuration of its grid."""
    dev = resolve(None)
    done = 0
    for op, case_id, dtype_name, layout in jobs:
        shape = (op, parse_case(case_id), DTYPES[dtype_name], layout)
        args, kwargs = _inputs(shape, dev)
        x = args[0]
        for cfg in [None, *grid(op, x, _dim(op, x, args, kwargs))]:
            call(op, args, kwargs, cfg)()
            done += 1
        del args, x
        dev.synchronize()
    return done


def warm(shapes: list[Shape], workers: int) -> float:
    return spread(_compile, [(op, c.id, str(d)[6:], lay) for op, c, d, lay in shapes], workers)


def time_shape(shape: Shape, dev: Device) -> dict[str, Any]:
    op, case, dtype, layout = shape
    args, kwargs = _inputs(shape, dev)
    x = args[0]
    configs = {label(c): c for c in grid(op, x, _dim(op, x, args, kwargs))}
    reference = OPS[op].reference
    fns: dict[str, Callable[[], Any]] = {"torch": lambda: reference(*args, **kwargs),
                                         "picked": call(op, args, kwargs, None)}
    for name, cfg in configs.items():
        fns[name] = call(op, args, kwargs, cfg)
    return {"op": op, "case": case.id, "dtype": str(dtype)[6:], "layout": layout,
            **time_grid(dev, fns, configs)}


def main(argv: Iterable[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--results", type=Path,
                   default=Path(__file__).parent / "results" / "kernels-h100-2026-11-26.json.gz")
    p.add_argument("--below", type=float, default=0.95)
    p.add_argument("--limit", type=int, default=24, help="shapes per op from the results")
    p.add_argument("--ops", default=",".join(OPS_TUNED))
    p.add_argument("--against", choices=("torch", "flaggems"), default="torch",
                   help="pick the results' rows under --below times this one (the norms beat "
                        "torch almost everywhere; FlagGems' tuned kernels are what they trail)")
    p.add_argument("--no-guards", action="store_true")
    p.add_argument("--workers", type=int, default=14)
    p.add_argument("--json", type=Path)
    args = p.parse_args(list(argv) if argv is not None else None)
    ops = [o for o in args.ops.split(",") if o]
    unknown = sorted(set(ops) - set(OPS_TUNED))
    if unknown:
        print(f"bench_row_tiles: --ops: {', '.join(unknown)} not among {', '.join(OPS_TUNED)}",
              file=sys.stderr)
        return 2
    dev = timed_device("bench_row_tiles")
    if dev is None:
        return 2
    shapes = from_results(args.results, args.below, args.limit, ops, args.against)
    if not args.no_guards:
        shapes += guards(ops)
    time_all(shapes, args.workers, warm, lambda shape: time_shape(shape, dev),
             lambda r: (f"{r['op']:11} {r['case']:>24} {r['dtype']:9} {r['layout']:10} "
                        f"torch {r['us']['torch']:8.1f} picked {r['vs_torch_picked']:5.2f} "
                        f"best {r['vs_torch_best']:5.2f} ({r['best']})"),
             args.json, dev)
    return 0


if __name__ == "__main__":
    sys.exit(main())
