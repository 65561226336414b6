"""softmax.int along any dim: rows in registers when they fit, looped beyond, columns for
earlier dims; fp32 arithmetic whatever the storage dtype."""

from __future__ import annotations

import torch

from flagbot.kernels.ops._rows import MAX_ROW_BLOCK, softmax_any_dim
from flagbot.kernels.spec import (
    Case,
    Inputs,
    OpSpec,
    elementwise_bytes,
    numel,
    randn,
)


def softmax(x: torch.Tensor, dim: int = -1, dtype: torch.dtype | None = None, *,
            max_row_block: int = MAX_ROW_BLOCK) -> torch.Tensor:
    """Softmax of `x` along `dim` (aten::softmax.int); `dtype` casts the input first."""
    return softmax_any_dim("softmax", x, dim, dtype, log=False, max_row_block=max_row_block)


def make_inputs(case: Case, dtype: torch.dtype, device: torch.device,
                gen: torch.Generator) -> Inputs:
    """x of the case's shape; `dim` from the case (default the last)."""
    return (randn(case.shape, dtype, device, gen),), {"dim": int(case.params.get("dim", -1))}


def reduced_size(case: Case) -> int:
    """Length of the dim softmax runs along."""
    return case.shape[int(case.params.get("dim", -1))]


# Last-dim cases only: a vendor override registered for the op is checked on these too.
CI_CASES = (Case((4, 33)), Case((3, 200)))
FULL_CASES = (Case((4096, 4096)), Case((65536, 128)), Case((1024, 65536)), Case((4096, 50257)),
              Case((2048, 32000)), Case((1000, 151936)), Case((3, 1_000_003)))

SPEC = OpSpec(
    name="softmax",
    aten=("softmax.int",),
    generic=softmax,
    reference=torch.softmax,
    make_inputs=make_inputs,
    ci_cases=CI_CASES,
    full_cases=FULL_CASES,
    bytes_moved=elementwise_bytes(2),
    flops=lambda case: 5 * numel(case.shape),
    reduce_size=reduced_size,
)
