"""What mm's pointer kernel (mm.py) and its descriptor variant (_mm_tma.py) share: the order
programs take output tiles in, and whether an operand's rows sit on 16 bytes."""
# Triton kernels take DSL-typed arguments that Python annotations cannot express.
# mypy: disable-error-code="untyped-decorator,no-untyped-def"

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def grouped_tile(pid, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 GROUP_M: tl.constexpr):
    """(row tile, column tile) of program `pid` in grouped order: GROUP_M row tiles share B's
    column tiles while those are still in L2."""
    grid_n = tl.cdiv(N, BLOCK_N)
    group = pid // (GROUP_M * grid_n)
    first_m = group * GROUP_M
    group_size = min(tl.cdiv(M, BLOCK_M) - first_m, GROUP_M)
    return first_m + (pid % (GROUP_M * grid_n)) % group_size, (pid % (GROUP_M * grid_n)) // group_size


def step(t: torch.Tensor) -> int:
    """How many elements apart `t`'s rows (or columns, where it is stored by columns) are."""
    return t.stride(0) if t.stride(1) == 1 else t.stride(1) if t.stride(0) == 1 else 1


def on_16_bytes(t: torch.Tensor) -> bool:
    """`t`'s rows (or columns, where it is stored by columns) start 16 bytes apart or a multiple
    of that; an operand strided both ways never does."""
    return step(t) * t.element_size() % 16 == 0
