"""Host time of one mm call through tensor descriptors against the pointer kernel's: what the
descriptor path adds before the device starts (its two descriptors and their encoding at
launch), for the shapes where host time can outlast the work.

Run (device machine, repository root, flagbot installed from it):
    python benchmarks/bench_mm_host_tma.py
Per shape and way: host microseconds per call while the device is kept busy ahead (so no
launch waits on it), and the median device microseconds of one call (`kernels.timing.bench`,
the harness's own timer: cold L2, interleaved).
Ways: torch.mm; mm() at the picked tiles through the pointer kernel and through descriptors;
the two descriptors alone; the descriptor kernel launched with descriptors made beforehand.
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
from flagbot.kernels.ops.mm import MMConfig, mm, picked_config

SHAPES = [(17, 448, 128, torch.bfloat16), (1024, 1024, 1024, torch.bfloat16),
          (419, 8192, 608, torch.bfloat16), (4096, 4096, 4096, torch.float16)]
CALLS = 200
WAYS = ("torch", "pointer", "descriptors", "make descriptors", "launch only")


def host_us(fn: Callable[[], Any], dev: Device) -> float:
    """Host microseconds a call, the device spinning ahead of the calls so none waits."""
    fn()
    dev.synchronize()
    dev.stall(300_000_000)  # ~0.2 s of device cycles: longer than the calls take
    start = time.perf_counter()
    for _ in range(CALLS):
        fn()
    per_call = (time.perf_counter() - start) / CALLS * 1e6
    dev.synchronize()
    return per_call


def ways(a: torch.Tensor, b: torch.Tensor, cfg: MMConfig) -> dict[str, Callable[[], Any]]:
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    a_desc = _mm_tma.TensorDescriptor.from_tensor(a, [cfg.block_m, cfg.block_k])
    b_desc = _mm_tma.TensorDescriptor.from_tensor(b, [cfg.block_k, cfg.block_n])
    grid = (triton.cdiv(m, cfg.block_m) * triton.cdiv(n, cfg.block_n), 1)

    def descriptors() -> None:
        _mm_tma.TensorDescriptor.from_tensor(a, [cfg.block_m, cfg.block_k])
        _mm_tma.TensorDescriptor.from_tensor(b, [cfg.block_k, cfg.block_n])

    def launch_only() -> None:
        _mm_tma._mm_tma_kernel[grid](
            a_desc, b_desc, c, m, n, k, k, 0, n, BLOCK_M=cfg.block_m, BLOCK_N=cfg.block_n,
            BLOCK_K=cfg.block_k, GROUP_M=cfg.group_m, A_COLUMNS=False, B_COLUMNS=False,
            ALIGN_C=alignment(n), num_warps=cfg.warps, num_stages=cfg.stages)

    pointer, through = replace(cfg, tma=False), replace(cfg, tma=True)
    return dict(zip(WAYS, (lambda: torch.mm(a, b), lambda: mm(a, b, config=pointer),
                           lambda: mm(a, b, config=through), descriptors, launch_only),
                    strict=True))


def main() -> int:
    if not torch.cuda.is_available() or not _mm_tma.target_has_tma():
        print("bench_mm_host_tma: needs an NVIDIA GPU of sm_90 or newer", file=sys.stderr)
        return 2
    dev = resolve("cuda")
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, triton "
          f"{triton.__version__}; host us a call / device us\n")
    print("| shape | tiles | " + " | ".join(WAYS) + " |")
    print("| --- " * (2 + len(WAYS)) + "|")
    for m, n, k, dtype in SHAPES:
        a = torch.randn(m, k, device="cuda", dtype=dtype)
        b = torch.randn(k, n, device="cuda", dtype=dtype)
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
        print(f"| {m}x{n}x{k} {str(dtype)[6:]} | {cfg.block_m}x{cfg.block_n}x{cfg.block_k} | "
              + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
