"""log_softmax.int along any dim: the softmax kernels with a log output."""

from __future__ import annotations

import torch

from flagbot.kernels.ops._rows import MAX_ROW_BLOCK, softmax_any_dim
from flagbot.kernels.ops.softmax import CI_CASES, FULL_CASES, make_inputs, reduced_size
from flagbot.kernels.spec import OpSpec, elementwise_bytes, numel


def log_softmax(x: torch.Tensor, dim: int = -1, dtype: torch.dtype | None = None, *,
                max_row_block: int = MAX_ROW_BLOCK) -> torch.Tensor:
    """log(softmax(x)) along `dim` (aten::log_softmax.int), computed as x - max - log(sum)."""
    return softmax_any_dim("log_softmax", x, dim, dtype, log=True, max_row_block=max_row_block)


SPEC = OpSpec(
    name="log_softmax",
    aten=("log_softmax.int",),
    generic=log_softmax,
    reference=torch.log_softmax,
    make_inputs=make_inputs,
    ci_cases=CI_CASES,
    full_cases=FULL_CASES,
    bytes_moved=elementwise_bytes(2),
    flops=lambda case: 5 * numel(case.shape),
    reduce_size=reduced_size,
)
