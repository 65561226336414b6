"""embedding: rows of a weight table gathered by int64 indices (no generic kernel; a copy, so
any correct kernel matches exactly)."""

from __future__ import annotations

import torch

from flagbot.kernels.ops._aten import spec
from flagbot.kernels.spec import Case, Inputs, randn


def make_inputs(case: Case, dtype: torch.dtype, device: torch.device,
                gen: torch.Generator) -> Inputs:
    """Case shape (vocabulary, width, lookups): weight (V, D), indices (N,) in [0, V)."""
    vocab, width, lookups = case.shape
    weight = randn((vocab, width), dtype, device, gen)
    indices = torch.randint(0, vocab, (lookups,), generator=gen, device=device)
    return (weight, indices), {}


SPEC = spec("embedding", "embedding", make_inputs,
            ci=(Case((50, 33, 20)), Case((7, 128, 64))),
            full=(Case((32000, 4096, 8192)), Case((151936, 1024, 16384)), Case((1000, 257, 4099))),
            bytes_moved=lambda case, dtype: 2 * case.shape[1] * case.shape[2] * dtype.itemsize
            + 8 * case.shape[2],
            flops=lambda case: case.shape[1] * case.shape[2])
