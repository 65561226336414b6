"""sum.dim_IntList over one dim, accumulated in fp32."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from kernels.ops._reduce import (
    CI_CASES,
    FULL_CASES,
    bytes_moved,
    make_inputs,
    reduce_dim,
    reduced_size,
)
from kernels.spec import OpSpec, numel


def sum_dim(x: torch.Tensor, dim: int | Sequence[int], keepdim: bool = False, *,
            dtype: torch.dtype | None = None) -> torch.Tensor:
    """Sum of `x` over one dim (aten::sum.dim_IntList)."""
    return reduce_dim(x, dim, keepdim, mean=False, dtype=dtype)


SPEC = OpSpec(
    name="sum",
    aten=("sum.dim_IntList",),
    generic=sum_dim,
    reference=torch.sum,
    make_inputs=make_inputs,
    ci_cases=CI_CASES,
    full_cases=FULL_CASES,
    bytes_moved=bytes_moved,
    flops=lambda case: numel(case.shape),
    reduce_size=reduced_size,
)
