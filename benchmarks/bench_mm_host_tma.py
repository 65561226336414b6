"""Host time of one mm call, stage by stage: through tensor descriptors against the pointer
kernel's, what the descriptor path adds before the device starts (its two descriptors and their
encoding at launch), and what the aligned copies of transposed odd operands cost, for the
shapes where host time can outlast the work.

Run (device machine, repository root, flagbot installed from it):
    python benchmarks/bench_mm_host_tma.py
Per shape and way: host microseconds per call while the device is kept busy ahead (so no
launch waits on it; the best of LOOPS loops of CALLS calls, a few hundred launches a loop,
well under what a device queues), and the median device microseconds of one call
(`kernels.timing.bench`, the harness's own timer: cold L2, interleaved).
Ways: torch.mm; mm() as picked; mm() at the picked tiles through the pointer kernel and
through descriptors; the aligned copies mm makes of operands off 16 bytes; the two
descriptors alone; the descriptor kernel launched with descriptors made beforehand.
Needs NVIDIA sm_90 or newer (descriptors); elsewhere it says so and exits 2.
"""
from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import torch
import triton

from flagbot.kernels import timing
from flagbot.kernels.device import Device, resolve
from flagbot.kernels.ops import _mm_tma
from flagbot.kernels.ops._rows import alignment
from flagbot.kernels.ops.mm import MMConfig, _aligned, mm, picked_config

# (m, n, k, dtype, both operands transposed)
SHAPES = [(17, 448, 128, torch.bfloat16, False), (1024, 1024, 1024, torch.bfloat16, False),
          (419, 8192, 608, torch.bfloat16, False), (4096, 4096, 4096, torch.float16, False),
          (166, 919, 1176, torch.bfloat16, True), (257, 499, 513, torch.bfloat16, True)]
CALLS, LOOPS = 200, 5
WAYS = ("torch", "picked", "pointer", "descriptors", "aligned copies", "make descriptors",
        "launch only")


def host_us(fn: Callable[[], Any], dev: Device) -> float:
    """Host microseconds a call, the device spinning ahead of the calls so none waits; the best
    of LOOPS loops (one host's Python path read up to half slower from one loop to the next)."""
    fn()
    dev.synchronize()
    best = float("inf")
    for _ in range(LOOPS):
        dev.stall(300_000_000)  # ~0.2 s of device cycles: longer than the calls take
        start = time.perf_counter()
        for _ in range(CALLS):
            fn()
        best = min(best, (time.perf_counter() - start) / CALLS * 1e6)
        dev.synchronize()
    return best


def ways(a: torch.Tensor, b: torch.Tensor, cfg: MMConfig) -> dict[str, Callable[[], Any]]:
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)

    def copies() -> tuple[torch.Tensor, torch.Tensor]:
        # what mm makes of operands whose rows (or columns) are off 16 bytes (others unchanged)
        return _aligned(a)[0], _aligned(b)[0]

    aa, bb = copies()
    a_desc, b_desc, a_columns, b_columns = _mm_tma._descriptors(aa, bb, cfg.block_m, cfg.block_n,
                                                                cfg.block_k)
    grid = (triton.cdiv(m, cfg.block_m) * triton.cdiv(n, cfg.block_n), 1)

    def descriptors() -> None:
        _mm_tma._descriptors(aa, bb, cfg.block_m, cfg.block_n, cfg.block_k)

    def launch_only() -> None:
        _mm_tma._mm_tma_kernel[grid](
            a_desc, b_desc, c, m, n, k, k, 0, n, BLOCK_M=cfg.block_m, BLOCK_N=cfg.block_n,
            BLOCK_K=cfg.block_k, GROUP_M=cfg.group_m, A_COLUMNS=a_columns, B_COLUMNS=b_columns,
            ALIGN_C=alignment(n), num_warps=cfg.warps, num_stages=cfg.stages)

    pointer = replace(cfg, tma=False, persistent=False)
    through = replace(cfg, tma=True, persistent=False)
    return dict(zip(WAYS, (lambda: torch.mm(a, b), lambda: mm(a, b),
                           lambda: mm(a, b, config=pointer), lambda: mm(a, b, config=through),
                           copies, descriptors, launch_only), strict=True))


def main() -> int:
    if not torch.cuda.is_available() or not _mm_tma.target_has_tma():
        print("bench_mm_host_tma: needs an NVIDIA GPU of sm_90 or newer", file=sys.stderr)
        return 2
    dev = resolve("cuda")
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, triton "
          f"{triton.__version__}; host us a call / device us\n")
    print("| shape | tiles | " + " | ".join(WAYS) + " |")
    print("| --- " * (2 + len(WAYS)) + "|")
    for m, n, k, dtype, transposed in SHAPES:
        a = torch.randn(m, k, device="cuda", dtype=dtype)
        b = torch.randn(k, n, device="cuda", dtype=dtype)
        if transposed:
            a, b = a.t().contiguous().t(), b.t().contiguous().t()
        cfg = picked_config(a, b)
        assert isinstance(cfg, MMConfig) and cfg.split_k == 1
        ref = torch.mm(a, b).float()
        fns = ways(a, b, cfg)
        for name, fn in fns.items():
            out = fn()
            if isinstance(out, torch.Tensor):
                assert (out.float() - ref).abs().max().item() < 1.0, name
        # the descriptors alone run nothing on the device
        timed = timing.bench({w: f for w, f in fns.items() if w != "make descriptors"}, dev,
                             launch=False)
        cells = []
        for name, fn in fns.items():
            device = (f"{timing.summary(timed.samples[name])['median']:.1f}"
                      if name in timed.samples else "-")
            cells.append(f"{host_us(fn, dev):.1f} / {device}")
        print(f"| {m}x{n}x{k} {str(dtype)[6:]}{' t' if transposed else ''} | "
              f"{cfg.block_m}x{cfg.block_n}x{cfg.block_k} | "
              + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
