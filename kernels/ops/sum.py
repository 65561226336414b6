"""sum.dim_IntList over one dim, accumulated in fp32."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from flagbot.kernels.ops._reduce import reduce_dim, reduction_spec


def sum_dim(x: torch.Tensor, dim: int | Sequence[int], keepdim: bool = False, *,
            dtype: torch.dtype | None = None) -> torch.Tensor:
    """Sum of `x` over one dim (aten::sum.dim_IntList)."""
    return reduce_dim(x, dim, keepdim, mean=False, dtype=dtype)


SPEC = reduction_spec("sum", ("sum.dim_IntList",), sum_dim, torch.sum)
