"""mean.dim over one dim, accumulated in fp32."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from flagbot.kernels.ops._reduce import reduce_dim, reduction_spec


def mean_dim(x: torch.Tensor, dim: int | Sequence[int], keepdim: bool = False, *,
             dtype: torch.dtype | None = None) -> torch.Tensor:
    """Mean of `x` over one dim (aten::mean.dim)."""
    return reduce_dim(x, dim, keepdim, mean=True, dtype=dtype)


SPEC = reduction_spec("mean", ("mean.dim",), mean_dim, torch.mean)
