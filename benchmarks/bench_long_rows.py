"""Long-row softmax/log_softmax launches against each other, shape by shape, on an accelerator.

Run (flagbot installed): python benchmarks/bench_long_rows.py [--json OUT]
Rows longer than one register block take a looped kernel (one program a row, each tile reduced
to a scalar running max and sum) or, over few rows, the chunk split (two launches). This times
those two, the looped kernel at other tiles and warps, and a variant that keeps the running
statistics per lane (one cross-lane reduction a row instead of one a tile; with ONE_EXP one
exponential an element instead of two), against torch, launch-inclusive as bench_kernels
times rows. Every launch is checked against torch first. The split's row threshold in
_rows_split.py comes from such a run; the per-lane variant is kept here, not in the kernels,
because it won only on some shapes (see RESULTS.md).
"""
# Triton kernels take DSL-typed arguments that Python annotations cannot express.
# mypy: disable-error-code="untyped-decorator,no-untyped-def"
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import torch
import triton
import triton.language as tl

from flagbot.kernels.ops import _rows
from flagbot.kernels.ops._rows import alignment, softmax_any_dim
from flagbot.kernels.ops._rows_split import softmax_split_rows, split_chunks, write_span

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_kernels  # noqa: E402 - the benchmark's own folder, found by path
from bench_mm_tiles import time_grid, timed_device  # noqa: E402

# (rows, row length, dtype): vocabulary rows and the long rows the random sweeps failed on
SHAPES = [(4096, 50257, "bfloat16"), (367, 50257, "bfloat16"), (245, 50257, "float16"),
          (169, 58417, "bfloat16"), (512, 100277, "bfloat16"), (113, 18839, "bfloat16"),
          (129, 19013, "float32"), (2048, 32768, "float16"), (363, 65535, "bfloat16"),
          (1000, 151936, "bfloat16"), (4096, 50257, "float32"), (227, 50257, "float32"),
          (389, 102239, "float16"), (2048, 32000, "bfloat16"), (1023, 32769, "float32")]
TILES = ((8192, 16), (4096, 8), (2048, 4), (4096, 16), (8192, 8))


@triton.jit
def _lane_kernel(x_ptr, out_ptr, n, stride_row, LOG: tl.constexpr, BLOCK_N: tl.constexpr,
                 ALIGN: tl.constexpr, ONE_EXP: tl.constexpr):
    n = (n // ALIGN) * ALIGN  # exact: tells the compiler it divides
    stride_row = (stride_row // ALIGN) * ALIGN  # exact: tells the compiler it divides
    row = tl.program_id(0).to(tl.int64)
    src = x_ptr + row * stride_row
    dst = out_ptr + row * n
    run_max = tl.full([BLOCK_N], -float("inf"), tl.float32)
    run_sum = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, n, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(src + cols, mask=cols < n, other=-float("inf")).to(tl.float32)
        if ONE_EXP:
            # exp(-|x - max|) rescales whichever side is smaller: one exponential an element
            d = x - run_max
            e = tl.where(x == -float("inf"), 0.0, tl.exp(-tl.abs(d)))
            run_sum = tl.where(d > 0, run_sum * e + 1.0, run_sum + e)
            run_max = tl.maximum(run_max, x)
        else:
            new_max = tl.maximum(run_max, x)
            safe = tl.where(new_max == -float("inf"), 0.0, new_max)
            run_sum = run_sum * tl.exp(run_max - safe) + tl.exp(x - safe)
            run_max = new_max
    m = tl.max(run_max, axis=0)
    s = tl.sum(tl.where(run_max == -float("inf"), 0.0, run_sum * tl.exp(run_max - m)), axis=0)
    write_span(src, dst, 0, n, m, s, LOG, BLOCK_N)


def lane(x: torch.Tensor, log: bool, block: int, warps: int, one_exp: bool) -> torch.Tensor:
    """softmax (or log_softmax) of each row of `x` through the per-lane kernel."""
    out = torch.empty_like(x)
    m, n = x.shape
    kernel: Any = _lane_kernel
    kernel[(m,)](x, out, n, x.stride(0), LOG=log, BLOCK_N=block,
                 ALIGN=alignment(n, x.stride(0)), ONE_EXP=one_exp, num_warps=warps)
    return out


def looped(x: torch.Tensor, log: bool, block: int, warps: int) -> torch.Tensor:
    """The library's looped kernel at a forced tile and warps."""
    out = torch.empty_like(x)
    m, n = x.shape
    kernel: Any = _rows._softmax_long_kernel
    kernel[(m,)](x, out, n, x.stride(0), LOG=log, BLOCK_N=block,
                 ALIGN=alignment(n, x.stride(0)), num_warps=warps)
    return out


def split(x: torch.Tensor, log: bool, block: int) -> torch.Tensor:
    """The library's chunk split, whatever the row count."""
    out = torch.empty_like(x)
    m, n = x.shape
    softmax_split_rows(x, out, log, alignment(n, x.stride(0)), split_chunks(1, n, block), block)
    return out


def candidates(x: torch.Tensor, log: bool) -> dict[str, Callable[[], torch.Tensor]]:
    """Every launch timed for one input, torch first."""
    ref = torch.log_softmax if log else torch.softmax
    fns: dict[str, Callable[[], torch.Tensor]] = {
        "torch": lambda: ref(x, -1),
        "picked": lambda: softmax_any_dim("softmax", x, -1, None, log)}
    for block, warps in TILES:
        fns[f"tile{block}/w{warps}"] = lambda b=block, w=warps: looped(x, log, b, w)
        fns[f"lane{block}/w{warps}"] = lambda b=block, w=warps: lane(x, log, b, w, False)
        fns[f"lane1e{block}/w{warps}"] = lambda b=block, w=warps: lane(x, log, b, w, True)
    for block in (4096, 2048):
        fns[f"split{block}"] = lambda b=block: split(x, log, b)
    return fns


def main(argv: Iterable[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", type=Path)
    args = p.parse_args(list(argv) if argv is not None else None)
    dev = timed_device("bench_long_rows")
    if dev is None:
        return 2
    results: list[dict[str, Any]] = []
    meta = bench_kernels.metadata(dev)
    for m, n, dtype in SHAPES:
        x = torch.randn(m, n, dtype=getattr(torch, dtype), device=dev.torch_device)
        for log in (False, True):
            fns = candidates(x, log)
            want = fns["torch"]().float()
            tol = 1e-4 if dtype == "float32" else 0.1 if log else 1e-2
            for name, fn in fns.items():
                err = (fn().float() - want).abs().max().item()
                if not err < tol:
                    print(f"bench_long_rows: {name} off by {err} on {m}x{n} {dtype}",
                          file=sys.stderr)
                    return 1
            timed = time_grid(dev, fns, [k for k in fns if k not in ("torch", "picked")])
            us = timed["us"]
            best = sorted((v, k) for k, v in us.items() if k != "torch")[:4]
            print(f"{'log_softmax' if log else 'softmax':11} {m}x{n} {dtype:9} torch "
                  f"{us['torch']:8.2f} picked {us['picked']:8.2f} best {best}", flush=True)
            results.append({"m": m, "n": n, "dtype": dtype, "log": log, **timed})
            if args.json:  # after every shape: a run cut off keeps what it measured
                args.json.write_text(json.dumps({"device": meta, "rows": results}))
        del x
    return 0


if __name__ == "__main__":
    sys.exit(main())
