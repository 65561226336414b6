"""Paths of the generic kernels that the registry's CI cases do not reach."""

from __future__ import annotations

import pytest
import torch

from flagbot.kernels.ops.gelu import gelu
from flagbot.kernels.ops.mm import dot_precision, mm
from flagbot.kernels.ops.softmax import softmax
from flagbot.kernels.ops.sum import sum_dim


def test_softmax_long_rows_take_the_looped_kernel_and_stay_exact(device: torch.device) -> None:
    x = torch.randn(3, 300, generator=torch.Generator().manual_seed(0)).to(device)
    out = softmax(x, -1, max_row_block=64)  # 300 > 64: two passes over 64-wide tiles
    torch.testing.assert_close(out, torch.softmax(x.double(), -1).float(), rtol=1.3e-6,
                               atol=1e-4)


def test_softmax_rejects_dims_out_of_range() -> None:
    with pytest.raises(IndexError, match="out of range"):
        softmax(torch.randn(4, 4), 2)


def test_sum_keepdim_keeps_the_reduced_dim(device: torch.device) -> None:
    x = torch.randn(4, 5, 6, device=device)
    assert sum_dim(x, [1], keepdim=True).shape == (4, 1, 6)


def test_gelu_rejects_unknown_approximation() -> None:
    with pytest.raises(ValueError, match="approximate"):
        gelu(torch.randn(8), approximate="fast")


def test_mm_rejects_mismatched_shapes() -> None:
    with pytest.raises(ValueError, match="do not multiply"):
        mm(torch.randn(4, 5), torch.randn(6, 4))


def test_mm_uses_three_pass_tf32_only_for_fp32() -> None:
    assert dot_precision(torch.float32) == "tf32x3"
    assert dot_precision(torch.bfloat16) == "tf32"
