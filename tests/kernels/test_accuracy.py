"""Accuracy: float64 reference, per-case errors, planted wrong and raising kernels."""

from __future__ import annotations

import torch

from flagbot.kernels.accuracy import check_case, check_op, compare
from flagbot.kernels.loader import Backend
from flagbot.kernels.registry import OPS
from flagbot.kernels.spec import Case


def test_compare_passes_within_and_fails_outside_tolerance() -> None:
    expected = torch.tensor([1.0, 2.0, 3.0])
    ok, max_abs, _, problem = compare(expected + 1e-5, expected, rtol=0.0, atol=2e-5)
    assert ok and problem is None and max_abs < 2e-5
    ok, _, _, problem = compare(expected + 1e-3, expected, rtol=0.0, atol=2e-5)
    assert not ok and problem == "3 of 3 elements outside tolerance"


def test_compare_never_accepts_nan_where_a_number_is_expected() -> None:
    ok, _, _, _ = compare(torch.tensor([float("nan")]), torch.tensor([1.0]), rtol=1, atol=1)
    assert not ok


def test_compare_reports_shape_and_dtype_mismatches() -> None:
    assert compare(torch.zeros(2), torch.zeros(3), 0, 0)[3] == "shape (2,), expected (3,)"
    assert "dtype" in str(compare(torch.zeros(2).half(), torch.zeros(2), 0, 0)[3])


def test_planted_wrong_kernel_fails_accuracy(planted: Backend, device: torch.device) -> None:
    wrong = next(op for op in planted.ops if op.name == "mul")
    assert wrong.func is not None
    results = check_op(OPS["mul"], wrong.func, OPS["mul"].ci_cases, [torch.float32], device,
                       seeds=(0,))
    assert results and not any(r.ok for r in results)
    assert all(r.max_abs_err is not None and r.max_abs_err > r.atol for r in results)


def test_raising_kernel_is_a_case_result_not_an_exception(device: torch.device) -> None:
    def boom(*args: object, **kwargs: object) -> torch.Tensor:
        raise RuntimeError("planted")

    result = check_case(OPS["silu"], boom, Case((8,)), torch.float32, device, seed=0)
    assert not result.ok and result.error == "RuntimeError: planted"


def test_a_non_tensor_result_is_reported(device: torch.device) -> None:
    result = check_case(OPS["silu"], lambda x: None, Case((8,)), torch.float32, device, seed=0)
    assert not result.ok and result.error == "returned NoneType, expected a tensor"


def test_each_seed_draws_fresh_inputs(device: torch.device) -> None:
    seen = []

    def spy(x: torch.Tensor) -> torch.Tensor:
        seen.append(x.clone())
        return torch.nn.functional.silu(x)

    check_op(OPS["silu"], spy, [Case((16,))], [torch.float32], device, seeds=(0, 1))
    assert len(seen) == 2 and not torch.equal(seen[0], seen[1])
