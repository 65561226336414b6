"""The tolerance table is FlagGems' and scales atol with the reduced size."""

from __future__ import annotations

import pytest
import torch

from flagbot.kernels.tolerances import OP_OVERRIDES, tolerance


@pytest.mark.parametrize(("dtype", "rtol"), [(torch.float16, 1e-3), (torch.bfloat16, 1.6e-2),
                                             (torch.float32, 1.3e-6)],
                         ids=["fp16", "bf16", "fp32"])
def test_rtol_matches_flaggems(dtype: torch.dtype, rtol: float) -> None:
    assert tolerance("add", dtype, 1).rtol == rtol


def test_atol_scales_with_reduced_size() -> None:
    assert tolerance("softmax", torch.float32, 4096).atol == pytest.approx(1e-4 * 4096)


def test_unknown_dtype_is_an_error_naming_the_table() -> None:
    with pytest.raises(KeyError, match="tolerances.py"):
        tolerance("add", torch.int32, 1)


def test_no_op_loosens_the_default_table() -> None:
    assert OP_OVERRIDES == {}
