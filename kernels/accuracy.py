"""Accuracy of one kernel on one case: several seeds against torch in float64, cast back."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from flagbot.kernels.spec import Case, OpSpec
from flagbot.kernels.tolerances import tolerance


@dataclass
class AccuracyCase:
    """The outcome of one (dtype, case, seed): errors, tolerance, and any exception."""

    dtype: str
    case: str
    seed: int
    ok: bool
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    rtol: float | None = None
    atol: float | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The report's `accuracy.cases[]` entry."""
        return dict(self.__dict__)


def upcast(value: Any) -> Any:
    """float64 copies of floating tensors, also inside lists (the reference precision); other
    values (index tensors, scalars) as they are."""
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.to(torch.float64)
    if isinstance(value, (list, tuple)):
        return type(value)(upcast(v) for v in value)
    return value


def downcast(value: Any, dtype: torch.dtype) -> Any:
    """The reference's floating outputs cast back to the tested dtype; indices kept."""
    if isinstance(value, torch.Tensor):
        return value.to(dtype) if value.is_floating_point() else value
    if isinstance(value, (list, tuple)):
        return tuple(downcast(v, dtype) for v in value)
    return value


def dtype_name(dtype: torch.dtype) -> str:
    """`float16` for torch.float16."""
    return str(dtype).removeprefix("torch.")


def compare(actual: torch.Tensor, expected: torch.Tensor, rtol: float,
            atol: float) -> tuple[bool, float, float, str | None]:
    """(ok, max abs err, max rel err, problem). rel err = |a - e| / (|e| + atol)."""
    if actual.shape != expected.shape:
        return False, float("nan"), float("nan"), (
            f"shape {tuple(actual.shape)}, expected {tuple(expected.shape)}")
    if actual.dtype != expected.dtype:
        return False, float("nan"), float("nan"), f"dtype {actual.dtype}, expected {expected.dtype}"
    if not expected.is_floating_point():  # indices and other integers: exact
        rtol, atol = 0.0, 0.0
    a, e = actual.to(torch.float64), expected.to(torch.float64)
    diff = (a - e).abs()
    diff = torch.where(torch.isnan(a) & torch.isnan(e), torch.zeros_like(diff), diff)
    bad = torch.isnan(diff) | (diff > atol + rtol * e.abs())
    if diff.numel() == 0:
        return True, 0.0, 0.0, None
    finite = torch.nan_to_num(diff, nan=float("inf"))
    max_abs = float(finite.max())
    max_rel = float((finite / (e.abs() + atol)).max())
    count = int(bad.sum())
    problem = f"{count} of {diff.numel()} elements outside tolerance" if count else None
    return count == 0, max_abs, max_rel, problem


def check_case(spec: OpSpec, fn: Callable[..., torch.Tensor], case: Case, dtype: torch.dtype,
               device: torch.device, seed: int) -> AccuracyCase:
    """Run `fn` and the float64 reference on fresh inputs from `seed`; never raises."""
    tol = tolerance(spec.name, dtype, spec.reduce_size(case))
    result = AccuracyCase(dtype=dtype_name(dtype), case=case.id, seed=seed, ok=False,
                          rtol=tol.rtol, atol=tol.atol)
    gen = torch.Generator(device=device).manual_seed(seed)
    args, kwargs = spec.make_inputs(case, dtype, device, gen)
    try:
        expected = downcast(spec.reference(*[upcast(a) for a in args], **kwargs), dtype)
        actual = fn(*args, **kwargs)
    except Exception as exc:  # a raising kernel is a per-case result, never the end of the run
        result.error = f"{type(exc).__name__}: {exc}"
        return result
    return _score(result, actual, expected, tol.rtol, tol.atol)


def _score(result: AccuracyCase, actual: Any, expected: Any, rtol: float,
           atol: float) -> AccuracyCase:
    pairs, problem = _outputs(actual, expected)
    if problem:
        result.error = problem
        return result
    result.ok, result.max_abs_err, result.max_rel_err = True, 0.0, 0.0
    for got, want in pairs:
        ok, max_abs, max_rel, error = compare(got.to(want.device), want, rtol, atol)
        result.ok = result.ok and ok
        result.max_abs_err = max(result.max_abs_err, max_abs)
        result.max_rel_err = max(result.max_rel_err, max_rel)
        result.error = result.error or error
    return result


def judge_case(spec: OpSpec, case: Case, dtype: torch.dtype, device: torch.device, seed: int,
               actual: Any) -> AccuracyCase:
    """The verdict on what a kernel returned in another process for the inputs `seed` gives
    (a string: the error it raised there); the reference is computed here, on inputs drawn
    here the same way, so the other process cannot make up its own verdict."""
    tol = tolerance(spec.name, dtype, spec.reduce_size(case))
    result = AccuracyCase(dtype=dtype_name(dtype), case=case.id, seed=seed, ok=False,
                          rtol=tol.rtol, atol=tol.atol)
    if isinstance(actual, str):
        result.error = actual
        return result
    gen = torch.Generator(device=device).manual_seed(seed)
    args, kwargs = spec.make_inputs(case, dtype, device, gen)
    try:
        expected = downcast(spec.reference(*[upcast(a) for a in args], **kwargs), dtype)
    except Exception as exc:
        result.error = f"the reference raised {type(exc).__name__}: {exc}"
        return result
    return _score(result, actual, expected, tol.rtol, tol.atol)


def _outputs(actual: Any, expected: Any) -> tuple[list[tuple[torch.Tensor, torch.Tensor]],
                                                  str | None]:
    """(output, reference) tensor pairs: one for a tensor, one per element for a tuple
    (max.dim's values and indices)."""
    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, torch.Tensor):
            return [], f"returned {type(actual).__name__}, expected a tensor"
        return [(actual, expected)], None
    if not isinstance(actual, (tuple, list)) or len(actual) != len(expected) or \
            not all(isinstance(a, torch.Tensor) for a in actual):
        return [], f"returned {type(actual).__name__}, expected {len(expected)} tensors"
    return list(zip(actual, expected, strict=True)), None


def check_op(spec: OpSpec, fn: Callable[..., torch.Tensor], cases: Sequence[Case],
             dtypes: Sequence[torch.dtype], device: torch.device,
             seeds: Sequence[int],
             done: Callable[[Case, torch.dtype, int], None] | None = None) -> list[AccuracyCase]:
    """Every (dtype, case, seed) of one op; stops an op early only after a raising kernel.

    `done(case, dtype, seeds)` is called after each (dtype, case), for progress reports.
    """
    results: list[AccuracyCase] = []
    for dtype in dtypes:
        for case in cases:
            for seed in seeds:
                outcome = check_case(spec, fn, case, dtype, device, seed)
                results.append(outcome)
                if outcome.error and outcome.max_abs_err is None:
                    break  # the kernel raised: other seeds would raise the same way
            if done is not None:
                done(case, dtype, len(seeds))
    return results
