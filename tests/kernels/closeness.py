"""What the op tests on the interpreter share: their dtypes, seeded inputs and the comparison
with a float64 reference at the harness's own tolerances."""

from __future__ import annotations

import torch

from flagbot.kernels.accuracy import compare
from flagbot.kernels.tolerances import tolerance

DTYPES = [torch.float32, torch.float16]  # the interpreter's bf16 is wrong without upcasts


def assert_close(op: str, actual: torch.Tensor, expected: torch.Tensor, reduced: int = 1) -> None:
    """`actual` within `op`'s tolerance (for `reduced` summed elements) of `expected`."""
    tol = tolerance(op, actual.dtype, reduced)
    ok, max_abs, _, problem = compare(actual, expected.to(actual.dtype), tol.rtol, tol.atol)
    assert ok, f"{op}: {problem} (max abs err {max_abs:.3g})"


def seeded_randn(*shape: int, dtype: torch.dtype = torch.float32, seed: int = 0,
                 device: torch.device | str = "cpu") -> torch.Tensor:
    """Normal values drawn on the CPU (the same on every device), then moved."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=gen).to(device=device, dtype=dtype)
