"""mean.dim over one dim, accumulated in fp32."""

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


def mean_dim(x: torch.Tensor, dim: int | Sequence[int], keepdim: bool = False, *,
             dtype: torch.dtype | None = None) -> torch.Tensor:
    """Mean of `x` over one dim (aten::mean.dim)."""
    return reduce_dim(x, dim, keepdim, mean=True, dtype=dtype)


SPEC = OpSpec(
    name="mean",
    aten=("mean.dim",),
    generic=mean_dim,
    reference=torch.mean,
    make_inputs=make_inputs,
    ci_cases=CI_CASES,
    full_cases=FULL_CASES,
    bytes_moved=bytes_moved,
    flops=lambda case: numel(case.shape),
    reduce_size=reduced_size,
)
