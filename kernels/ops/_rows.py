"""Launch sizing shared by the row-wise generic ops (softmax, norms, last-dim reductions)."""

from __future__ import annotations

import triton

# A whole row lives in registers up to this many elements; longer rows take the looped path.
MAX_ROW_BLOCK = 32768


def row_block(n: int) -> int:
    """The power-of-two tile that holds a row of `n` elements."""
    return int(triton.next_power_of_2(n))


def row_warps(block: int) -> int:
    """Warps per program: enough threads that each holds at most ~16 elements of the row."""
    if block <= 1024:
        return 4
    if block <= 4096:
        return 8
    return 16
