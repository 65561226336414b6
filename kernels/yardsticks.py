"""Absolute yardsticks, measured once per run on the device at hand: copy bandwidth and torch's
matmul throughput. A relative gate passes a slow kernel whose baseline is slower still; the
fraction of what the device can do shows that.

- copy bandwidth: a device-to-device copy of twice the flush buffer (512 MB on a GPU),
  counting bytes read plus bytes written;
- matmul: torch's n x n x n product per dtype (n up to 4096), 2 n^3 flops.
A case is compute-bound when its flops per byte exceed the device's ridge (matmul rate over
copy bandwidth), memory-bound otherwise; its yardstick is the fraction of the matching peak.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from flagbot.kernels import timing
from flagbot.kernels.device import Device

MAX_MATMUL_N = 4096
# Below this many flops per byte a case is memory-bound on any current accelerator, and the
# matmul peak (which costs a few hundred ms to measure) is not needed.
SURELY_MEMORY_BOUND = 4.0


def _sig(value: float) -> float:
    """Four significant digits (interpreted kernels reach tiny fractions)."""
    return float(f"{value:.4g}")


def _median_us(dev: Device, fn: Callable[[], object]) -> float:
    m = timing.bench({"yardstick": fn}, dev, launch=False)
    return timing.summary(m.samples["yardstick"])["median"]


@dataclass
class Yardsticks:
    """The device's measured ceilings, filled lazily (matmul per dtype on first need)."""

    device: Device
    copy_gbps: float | None = None
    matmul_tflops: dict[str, float] = field(default_factory=dict)

    def copy(self) -> float:
        """GB/s of a large device-to-device copy (read + write)."""
        if self.copy_gbps is None:
            n = self.device.flush_bytes // 2
            src = torch.ones(n, dtype=torch.int32, device=self.device.torch_device)
            dst = torch.empty_like(src)
            us = _median_us(self.device, lambda: dst.copy_(src))
            self.copy_gbps = 2 * n * 4 / (us * 1e-6) / 1e9
            del src, dst
        return self.copy_gbps

    def matmul(self, dtype: torch.dtype) -> float:
        """TFLOP/s of torch's square matmul in `dtype`."""
        key = str(dtype).removeprefix("torch.")
        if key not in self.matmul_tflops:
            n = int((self.device.flush_bytes / 12) ** 0.5) // 128 * 128 or 128
            n = min(MAX_MATMUL_N, n)
            gen = torch.Generator(device=self.device.torch_device).manual_seed(0)
            a = torch.randn((n, n), generator=gen, device=self.device.torch_device).to(dtype)
            b = torch.randn((n, n), generator=gen, device=self.device.torch_device).to(dtype)
            us = _median_us(self.device, lambda: torch.matmul(a, b))
            self.matmul_tflops[key] = 2 * n**3 / (us * 1e-6) / 1e12
        return self.matmul_tflops[key]

    def judge(self, bytes_moved: int, flops: int, dtype: torch.dtype, latency_us: float
              ) -> dict[str, object]:
        """The case's bound and its fractions of copy bandwidth and of torch's matmul."""
        gbps = bytes_moved / (latency_us * 1e-6) / 1e9
        copy = self.copy()
        out: dict[str, object] = {"bound": "memory",
                                  "fraction_of_copy": _sig(gbps / copy) if copy else None,
                                  "fraction_of_matmul": None}
        if bytes_moved and flops / bytes_moved >= SURELY_MEMORY_BOUND:
            peak = self.matmul(dtype)
            tflops = flops / (latency_us * 1e-6) / 1e12
            out["fraction_of_matmul"] = _sig(tflops / peak) if peak else None
            ridge = peak * 1e12 / (copy * 1e9) if copy else float("inf")
            if flops / bytes_moved >= ridge:
                out["bound"] = "compute"
        return out

    def to_json(self) -> dict[str, object]:
        return {"copy_gbps": None if self.copy_gbps is None else round(self.copy_gbps, 1),
                "matmul_tflops": {k: round(v, 1) for k, v in self.matmul_tflops.items()}}
