"""mm tile configurations against each other, shape by shape, on an accelerator.

Run (flagbot installed): python benchmarks/bench_mm_tiles.py [--results FILE] [--below R]
      [--limit N] [--shapes MxNxK:dtype[:layout],...] [--workers W] [--json OUT]
      [--grid full|skinny|gemv]
For each shape (by default the mm rows of a bench_kernels results file under `--below` times
torch, plus the fixed sweep's mm rows as guards), times torch, the shape-picked configuration
and every configuration of a grid (tile shapes, K splits, K padding), launch-inclusive and
stall-hidden, interleaved as bench_kernels times rows; prints per shape the best configuration
and its ratio to torch, and writes every time to the JSON file. Compilation runs first in
`--workers` processes (one compiled kernel per configuration and shape specialisation), so the
timing pass finds every kernel in Triton's cache. mm's shape rules (`mm_config`) come from
such a run; a vendor's own card may well want others.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch
import triton

from flagbot.kernels.device import Device, resolve
from flagbot.kernels.ops.mm import GemvConfig, MMConfig, mm, mm_config, picked_config
from flagbot.kernels.spec import Case

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_kernels  # noqa: E402 - the benchmark's own folder, found by path

DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}
REPS = 8


def grid(m: int, n: int, k: int, dtype: torch.dtype) -> list[MMConfig]:
    """Every configuration tried for one shape: tile shapes that fit the product, each with the
    K splits that leave at least two K tiles a split and no more than ~4 programs per SM, with
    K padded where K does not divide into tiles, and for 16-bit products with a dim that leaves
    row starts off 16 bytes, also with the operands read in place (no aligned copies: small
    products pay the copies' launches more than the narrower loads), and 16-bit tiles split
    up to two ways also loaded through tensor descriptors (`MMConfig.tma`), unsplit ones also
    by persistent programs (`MMConfig.persistent`)."""
    wide = dtype.itemsize == 2
    unaligned = wide and any(d % 8 for d in (m, n, k))
    bk = min(64 if wide else 32, max(16, int(triton.next_power_of_2(k))))
    tiles = ([(128, 256, 8, 3), (128, 128, 8, 3), (128, 128, 4, 4), (64, 128, 4, 4),
              (128, 64, 4, 4), (64, 64, 4, 4), (64, 256, 8, 3), (32, 128, 4, 4), (16, 128, 4, 4),
              (32, 64, 4, 4)] if wide else
             [(128, 64, 4, 4), (128, 128, 8, 3), (64, 128, 4, 4), (64, 64, 4, 4),
              (32, 64, 4, 4), (16, 64, 4, 4), (32, 128, 4, 4),
              # 3xTF32 splits both operands in registers: 32x128 tiles on 4 warps take ~217
              # registers a thread (sm_90), two programs an SM; more warps share the tile
              (32, 128, 8, 4), (64, 128, 8, 3), (128, 64, 8, 3), (64, 64, 8, 4)])
    out: list[MMConfig] = []
    for bm, bn, warps, stages in tiles:
        if (bm > max(16, 2 * triton.next_power_of_2(m))
                or bn > max(64, 2 * triton.next_power_of_2(n))):
            continue
        count = triton.cdiv(m, bm) * triton.cdiv(n, bn)
        for split in (1, 2, 4, 8, 16, 32):
            if split > 1 and (count * split > 4 * 264 or k // split < 2 * bk or count >= 264):
                continue
            out.append(MMConfig(bm, bn, bk, warps, stages, split_k=split))
            if not wide and split == 1:
                # half the K step: half the registers each split operand takes
                out.append(MMConfig(bm, bn, 16, warps, stages, split_k=split))
            if unaligned and split <= 2:
                out.append(MMConfig(bm, bn, bk, warps, stages, split_k=split,
                                    copy_unaligned=False))
            if k % bk and split <= 2:
                out.append(MMConfig(bm, bn, bk, warps, stages, split_k=split, pad_k=True))
            if wide and split <= 2:
                # the same tiles loaded through tensor descriptors, as mm's pick loads every
                # 16-bit tile (the pointer kernel where the target has none), unsplit also by
                # resident programs looping over the tiles (MMConfig.persistent)
                out.append(MMConfig(bm, bn, bk, warps, stages, split_k=split, tma=True))
                if split == 1:
                    out.append(MMConfig(bm, bn, bk, warps, stages, tma=True, persistent=True))
    return out or [mm_config(m, n, k, dtype)]


def skinny_grid(m: int, n: int, k: int, dtype: torch.dtype) -> list[MMConfig]:
    """Products of up to 64 rows, which read B once and are bound by that read: the row tile
    that holds M, 64- and 128-wide column tiles, one and two K tiles' worth of K per step, K
    split towards one and two programs per multiprocessor, each with and without the copy
    that gives unaligned rows 16-byte starts (a copy moves B twice more than the product), for
    16-bit also loaded through tensor descriptors, and for fp32 with A copied row by row (a
    no-op where A is stored so already)."""
    wide = dtype.itemsize == 2
    bm = 16 if m <= 16 else 32 if m <= 32 else 64
    out: list[MMConfig] = []
    for bn in (64, 128):
        tiles = triton.cdiv(m, bm) * triton.cdiv(n, bn)
        for bk in ((64, 128) if wide else (32, 64)):
            bk = min(bk, max(16, int(triton.next_power_of_2(k))))
            splits = sorted({min(max(1, triton.cdiv(programs, tiles)), max(1, k // (2 * bk)), 32)
                             for programs in (132, 264, 528)})
            for split in splits:
                for copy in (True, False):
                    cfg = MMConfig(bm, bn, bk, 4, 4, split_k=split, copy_unaligned=copy)
                    # fp32 with A read down its columns: also with A copied row by row; 16-bit
                    # also through tensor descriptors, as mm's pick loads them
                    extra = [replace(cfg, tma=True)] if wide else [replace(cfg, a_rows=True)]
                    for variant in [cfg, *extra]:
                        if variant not in out:
                            out.append(variant)
    return out


def gemv_grid(m: int, n: int, k: int, dtype: torch.dtype) -> list[GemvConfig]:
    """Matrix-vector products (one row or one column of output): outputs per program x K per
    step (1-16K elements a tile) x warps, each unsplit and with K split towards one and two
    programs per multiprocessor (a second launch sums the fp32 partials). The picked tile
    takes 32 outputs a program whatever their count: 4408 outputs over a K of 8192 (bf16, the
    matrix's rows along N) ran at 0.53x torch in 138 programs. Two and four outputs a program
    with K steps up to 2048 too: a few hundred fp32 outputs over a K of 16384 (the matrix's
    rows along K) take 2 a program and 256 of K a step, 2 KB a step, and ran at 0.59x torch."""
    rows = max(m, n)
    out: list[GemvConfig] = []
    for block_r in (2, 4, 8, 16, 32, 64, 128, 256):
        for block_k in (32, 64, 128, 256, 512, 1024, 2048):
            if not 1024 <= block_r * block_k <= 16384:
                continue
            programs = triton.cdiv(rows, block_r)
            splits = sorted({1} | {min(max(1, triton.cdiv(p, programs)),
                                       max(1, k // (4 * block_k)), 32) for p in (264, 528)})
            for warps in (4, 8):
                for split in splits:
                    out.append(GemvConfig(block_r, block_k, warps, 3, split_k=split))
    return out


GRIDS: dict[str, Callable[[int, int, int, torch.dtype], list[Any]]] = {
    "full": grid, "skinny": skinny_grid, "gemv": gemv_grid}


def is_gemv(case: Case) -> bool:
    return min(case.shape[0], case.shape[1]) == 1


def label(cfg: MMConfig | GemvConfig) -> str:
    if isinstance(cfg, GemvConfig):
        return (f"gemv{cfg.block_r}x{cfg.block_k}/w{cfg.warps}s{cfg.stages}"
                f"/k{cfg.split_k}")
    return (f"{cfg.block_m}x{cfg.block_n}x{cfg.block_k}/w{cfg.warps}s{cfg.stages}"
            f"/k{cfg.split_k}{'/pad' if cfg.pad_k else ''}"
            f"{'' if cfg.copy_unaligned else '/nocopy'}{'/arows' if cfg.a_rows else ''}"
            f"{'/tma' if cfg.tma else ''}{'/persistent' if cfg.persistent else ''}")


def parse_shape(text: str) -> tuple[Case, torch.dtype, str]:
    parts = text.split(":")
    dims = tuple(int(x) for x in parts[0].split("x"))
    return Case(dims), DTYPES[parts[1] if len(parts) > 1 else "bfloat16"], \
        parts[2] if len(parts) > 2 else "contiguous"


def result_rows(path: Path) -> list[dict[str, Any]]:
    """Every row of a bench_kernels results file (JSON, or gzipped JSON): random and fixed."""
    data = bench_kernels.sweep_pool.read_result(path)
    return [r for sweep in data.get("random", []) for r in sweep["rows"]] + data.get("rows", [])


def worst_spread(rows: list[dict[str, Any]], op: str, below: float,
                 limit: int, ratio: str = "vs_torch") -> list[dict[str, Any]]:
    """`op`'s rows under `below` times torch (the row's `ratio` field), worst first, spread
    over the range (every `step`-th, so that `limit` rows cover all of it)."""
    bad = sorted((r for r in rows if r["op"] == op and r.get(ratio) is not None
                  and r[ratio] < below), key=lambda r: r[ratio])
    step = max(1, len(bad) // max(1, limit))
    return bad[::step][:limit]


def from_results(path: Path, below: float, limit: int, gemv: bool = False
                 ) -> list[tuple[Case, torch.dtype, str]]:
    """The mm rows of a bench_kernels results file under `below` times torch (worst_spread);
    `gemv`: only the matrix-vector ones, else only the others."""
    rows = [r for r in result_rows(path) if r["op"] == "mm" and is_gemv(_case(r)) == gemv]
    return [(_case(r), DTYPES[r["dtype"]], r["layout"])
            for r in worst_spread(rows, "mm", below, limit)]


def _case(row: dict[str, Any]) -> Case:
    return Case(tuple(int(x) for x in row["case"].split("x")))


def guards(gemv: bool = False) -> list[tuple[Case, torch.dtype, str]]:
    """The fixed sweep's mm rows (`gemv`: its matrix-vector ones, else the others)."""
    return [(row.case, row.dtype, row.layout) for row in bench_kernels.SWEEP
            if row.op == "mm" and is_gemv(row.case) == gemv]


def _inputs(case: Case, dtype: torch.dtype, layout: str, dev: Device) -> tuple[Any, ...]:
    row = bench_kernels.Row("mm", case, dtype, layout, memory_bound=False)
    args, _ = bench_kernels.inputs(row, dev)
    return args


def _compile(jobs: list[tuple[tuple[int, ...], str, str, str]]) -> int:
    """Worker: run every (shape, dtype, layout) once with each of its grid's configurations."""
    dev = resolve(None)
    done = 0
    for dims, dtype_name, layout, grid_name in jobs:
        dtype = DTYPES[dtype_name]
        a, b = _inputs(Case(dims), dtype, layout, dev)
        for cfg in [None, *GRIDS[grid_name](*dims, dtype)]:
            mm(a, b, config=cfg)
            done += 1
        del a, b
        dev.synchronize()
    return done


def spread(worker: Callable[[list[Any]], int], jobs: list[Any], workers: int) -> float:
    """Run `worker` over `jobs` dealt round-robin to `workers` spawned processes (each compiles
    its share, so that the timing pass finds every kernel in Triton's cache); seconds taken."""
    began = time.perf_counter()
    chunks = [jobs[i::workers] for i in range(workers)]
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        pool.map(worker, [c for c in chunks if c])
    return time.perf_counter() - began


def warm(shapes: list[tuple[Case, torch.dtype, str]], workers: int,
         grid_name: str = "full") -> float:
    return spread(_compile, [(c.shape, str(d)[6:], lay, grid_name) for c, d, lay in shapes],
                  workers)


def time_all(shapes: list[Any], workers: int, compile_all: Callable[[list[Any], int], float],
             time_one: Callable[[Any], dict[str, Any]], line: Callable[[dict[str, Any]], str],
             json_path: Path | None, dev: Device) -> list[dict[str, Any]]:
    """Compile every shape's grid first (`compile_all`), then time shape by shape, printing
    `line` of each result and rewriting `json_path` after every shape."""
    print(f"{len(shapes)} shapes; compiling in {workers} processes", flush=True)
    print(f"compiled in {compile_all(shapes, workers):.0f} s", flush=True)
    out: list[dict[str, Any]] = []
    meta = bench_kernels.metadata(dev)
    for shape in shapes:
        out.append(time_one(shape))
        if json_path:  # after every shape: a run cut off keeps what it measured
            json_path.write_text(json.dumps({"device": meta, "rows": out}))
        print(line(out[-1]), flush=True)
    return out


def timed_device(name: str) -> Device | None:
    """The device to time on, or None (after saying so) where nothing can be timed."""
    dev = resolve(None)
    if not dev.timed:
        print(f"{name}: needs an accelerator (nothing is timed on the interpreter)",
              file=sys.stderr)
        return None
    return dev


def time_grid(dev: Device, fns: dict[str, Callable[[], Any]],
              grid_names: Iterable[str]) -> dict[str, Any]:
    """`fns` ("torch", "picked" and the launches named in `grid_names`) timed as bench_kernels
    times rows: per label launch-inclusive (`us`) and stall-hidden (`device_us`) microseconds,
    the grid's best launch-inclusive label (`best`, "picked" for an empty grid) and torch's
    time over the picked launch's and the best's."""
    bench_kernels.busy_warmup(dev, fns)
    times, _ = bench_kernels.best_of_attempts(dev, fns, REPS)
    launch = {k: round(v["launch"], 2) for k, v in times.items()}
    best = min(grid_names, key=lambda name: launch[name], default="picked")
    return {"us": launch, "device_us": {k: round(v["device"], 2) for k, v in times.items()},
            "best": best, "vs_torch_picked": round(launch["torch"] / launch["picked"], 3),
            "vs_torch_best": round(launch["torch"] / launch[best], 3)}


def time_shape(case: Case, dtype: torch.dtype, layout: str, dev: Device,
               grid_name: str = "full") -> dict[str, Any]:
    a, b = _inputs(case, dtype, layout, dev)
    m, n, k = case.shape
    configs = {label(c): c for c in GRIDS[grid_name](m, n, k, dtype)}
    fns: dict[str, Callable[[], Any]] = {"torch": lambda: torch.mm(a, b),
                                         "picked": lambda: mm(a, b)}
    for name, cfg in configs.items():
        fns[name] = (lambda c: lambda: mm(a, b, config=c))(cfg)
    return {"case": case.id, "dtype": str(dtype)[6:], "layout": layout,
            "picked_config": label(picked_config(a, b)), **time_grid(dev, fns, configs)}


def main(argv: Iterable[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--results", type=Path,
                   default=Path(__file__).parent / "results" / "kernels-h100-2026-11-26.json.gz")
    p.add_argument("--below", type=float, default=0.95)
    p.add_argument("--limit", type=int, default=48)
    p.add_argument("--shapes", help="MxNxK:dtype[:layout],... instead of the results file")
    p.add_argument("--no-guards", action="store_true")
    p.add_argument("--workers", type=int, default=14)
    p.add_argument("--json", type=Path)
    p.add_argument("--grid", choices=sorted(GRIDS), default="full",
                   help="the configurations tried: the full grid, the skinny-product one, or the "
                        "matrix-vector one (then only matrix-vector shapes)")
    args = p.parse_args(list(argv) if argv is not None else None)
    dev = timed_device("bench_mm_tiles")
    if dev is None:
        return 2
    gemv = args.grid == "gemv"
    shapes = ([parse_shape(s) for s in args.shapes.split(",")] if args.shapes
              else from_results(args.results, args.below, args.limit, gemv))
    if not args.no_guards:
        shapes += guards(gemv)
    time_all(shapes, args.workers, lambda sh, w: warm(sh, w, args.grid),
             lambda shape: time_shape(*shape, dev, args.grid),
             lambda r: (f"{r['case']:>18} {r['dtype']:9} {r['layout']:10} "
                        f"torch {r['us']['torch']:8.1f} picked {r['vs_torch_picked']:5.2f} "
                        f"({r['picked_config']}) best {r['vs_torch_best']:5.2f} ({r['best']})"),
             args.json, dev)
    return 0


if __name__ == "__main__":
    sys.exit(main())
