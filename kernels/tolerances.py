"""The one tolerance table (FlagGems' RESOLUTION): rtol by dtype, atol = 1e-4 x reduced size.

Never loosen a tolerance inline: add a row to OP_OVERRIDES with the reason beside it.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

RTOL: dict[torch.dtype, float] = {
    torch.float16: 1e-3,
    torch.bfloat16: 1.6e-2,
    torch.float32: 1.3e-6,
    torch.float64: 1e-7,
}
ATOL_PER_REDUCED_ELEMENT = 1e-4

# (op name, dtype) -> (rtol, atol per reduced element). Empty: every op meets the default.
OP_OVERRIDES: dict[tuple[str, torch.dtype], tuple[float, float]] = {}


@dataclass(frozen=True)
class Tolerance:
    """|actual - expected| <= atol + rtol * |expected|, elementwise."""

    rtol: float
    atol: float


def tolerance(op: str, dtype: torch.dtype, reduced: int) -> Tolerance:
    """The tolerance for `op` in `dtype` when `reduced` elements feed each output."""
    if dtype not in RTOL:
        raise KeyError(f"no tolerance for dtype {dtype}; add it to kernels/tolerances.py RTOL")
    rtol, atol = OP_OVERRIDES.get((op, dtype), (RTOL[dtype], ATOL_PER_REDUCED_ELEMENT))
    return Tolerance(rtol=rtol, atol=atol * max(1, reduced))
