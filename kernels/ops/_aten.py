"""Specs for operators the library has no kernel for: the reference is the aten overload itself,
called with the aten schema's arguments, so a backend's function and FlagGems' are called alike.

A backend overriding one of these is gated against FlagGems' op when FlagGems is the baseline,
else (no generic kernel) as a new op against torch native.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from flagbot.kernels.spec import NO_BF16, Case, InputMaker, Inputs, OpSpec, numel, randn


def aten(name: str) -> Callable[..., Any]:
    """torch.ops.aten.<op>.<overload> for `op.overload` (`default` when none is given)."""
    base, _, overload = name.partition(".")
    # A typed name, not a `type: ignore`: mypy runs with and without torch installed, and an
    # ignore needed in one run is an unused-ignore error in the other.
    op: Callable[..., Any] = getattr(getattr(torch.ops.aten, base), overload or "default")
    return op


def spec(name: str, aten_name: str, make_inputs: InputMaker, ci: tuple[Case, ...],
         full: tuple[Case, ...], bytes_moved: Callable[[Case, torch.dtype], int],
         flops: Callable[[Case], int],
         reduce_size: Callable[[Case], int] = lambda case: 1) -> OpSpec:
    """An OpSpec without a generic kernel whose reference is the aten overload."""
    return OpSpec(name=name, aten=(aten_name,), generic=None, reference=aten(aten_name),
                  make_inputs=make_inputs, ci_cases=ci, full_cases=full,
                  bytes_moved=bytes_moved, flops=flops, reduce_size=reduce_size,
                  interpreter_dtypes=NO_BF16)


def positive(shape: tuple[int, ...], dtype: torch.dtype, device: torch.device,
             gen: torch.Generator, floor: float = 0.1) -> torch.Tensor:
    """|normal| + floor: inputs of sqrt, rsqrt and divisors, away from zero."""
    values = torch.randn(shape, generator=gen, device=device, dtype=torch.float32)
    return (values.abs() + floor).to(dtype)


def with_unique_max(case: Case, dtype: torch.dtype, device: torch.device,
                    gen: torch.Generator) -> torch.Tensor:
    """Normal values with one planted maximum (10.0) per slice along the case's `dim`, so the
    index of the maximum is unique and any correct kernel returns the same one."""
    dim = int(case.params.get("dim", -1)) % len(case.shape)
    x = torch.randn(case.shape, generator=gen, device=device, dtype=torch.float32)
    index_shape = list(case.shape)
    index_shape[dim] = 1
    where = torch.randint(0, case.shape[dim], index_shape, generator=gen, device=device)
    return x.scatter(dim, where, 10.0).to(dtype)


def unary(case: Case, dtype: torch.dtype, device: torch.device, gen: torch.Generator) -> Inputs:
    """One normal tensor of the case's shape."""
    return (randn(case.shape, dtype, device, gen),), {}


def unary_positive(case: Case, dtype: torch.dtype, device: torch.device,
                   gen: torch.Generator) -> Inputs:
    """One positive tensor of the case's shape."""
    return (positive(case.shape, dtype, device, gen),), {}


def matmul_costs(case: Case) -> tuple[int, int, int, int]:
    """(batch, m, n, k) of a [B,] M, N, K case."""
    *batch, m, n, k = case.shape
    return numel(tuple(batch)), m, n, k


def matmul_bytes(bias: bool) -> Callable[[Case, torch.dtype], int]:
    """A, B and C once each (plus the bias row for addmm)."""

    def count(case: Case, dtype: torch.dtype) -> int:
        b, m, n, k = matmul_costs(case)
        return (b * (m * k + k * n + m * n) + (n if bias else 0)) * dtype.itemsize

    return count


def matmul_flops(case: Case) -> int:
    """2 x M x N x K per batch."""
    b, m, n, k = matmul_costs(case)
    return 2 * b * m * n * k
