"""What the harness knows about one operator: aten names, kernel, reference, inputs, costs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from flagbot.kernels.case import Case as Case  # re-exported: ops and harness import it from here
from flagbot.kernels.case import numel as numel

# (positional args, keyword args) handed to a candidate, the generic kernel and torch alike.
Inputs = tuple[tuple[Any, ...], dict[str, Any]]
InputMaker = Callable[["Case", torch.dtype, torch.device, torch.Generator], Inputs]

FLOATS = (torch.float32, torch.float16, torch.bfloat16)
# The interpreter computes bf16 on raw bit patterns; only kernels that upcast on load are right.
UPCASTING = FLOATS
NO_BF16 = (torch.float32, torch.float16)


@dataclass(frozen=True)
class OpSpec:
    """An operator: its kernel (None when the library has none), reference and costs."""

    name: str
    aten: tuple[str, ...]
    generic: Callable[..., torch.Tensor] | None
    reference: Callable[..., torch.Tensor]
    make_inputs: InputMaker
    ci_cases: tuple[Case, ...]
    full_cases: tuple[Case, ...]
    bytes_moved: Callable[[Case, torch.dtype], int]
    flops: Callable[[Case], int]
    reduce_size: Callable[[Case], int] = lambda case: 1
    dtypes: tuple[torch.dtype, ...] = FLOATS
    interpreter_dtypes: tuple[torch.dtype, ...] = UPCASTING

    def cases(self, level: str) -> tuple[Case, ...]:
        """The CPU-sized (`ci`) or device-sized (`full`) cases, or `random:N:SEED`: N seeded
        random cases (kernels/random_shapes.py; an op without a random distribution keeps
        its full cases)."""
        if level.startswith("random:"):
            from flagbot.kernels import random_shapes

            _, count, seed = level.split(":")
            if self.name in random_shapes.SUPPORTED:
                return random_shapes.draw(self.name, int(count), int(seed))
            return self.full_cases
        return self.ci_cases if level == "ci" else self.full_cases


def randn(shape: tuple[int, ...], dtype: torch.dtype, device: torch.device,
          gen: torch.Generator) -> torch.Tensor:
    """Fresh normal values (never zeros: they hide unwritten outputs), made on `device`."""
    return torch.randn(shape, generator=gen, device=device, dtype=torch.float32).to(dtype)


def unary_inputs(case: Case, dtype: torch.dtype, device: torch.device,
                 gen: torch.Generator) -> Inputs:
    """One tensor of the case's shape, the case's params as keywords."""
    return (randn(case.shape, dtype, device, gen),), dict(case.params)


def second_operand_shape(case: Case) -> tuple[int, ...]:
    """The shape of a binary op's y: the case's shape, or its last `broadcast` dims."""
    k = int(case.params.get("broadcast", 0))
    return case.shape[-k:] if k else case.shape


def binary_inputs(case: Case, dtype: torch.dtype, device: torch.device,
                  gen: torch.Generator) -> Inputs:
    """x of the case's shape and y of `second_operand_shape` (param `broadcast`: y holds only
    the last that many dims); the other params as keywords."""
    x = randn(case.shape, dtype, device, gen)
    y = randn(second_operand_shape(case), dtype, device, gen)
    return (x, y), {k: v for k, v in case.params.items() if k != "broadcast"}


def binary_bytes(case: Case, dtype: torch.dtype) -> int:
    """x and the output at full size, y at its own (possibly broadcast) size."""
    return (2 * numel(case.shape) + numel(second_operand_shape(case))) * dtype.itemsize


def elementwise_bytes(tensors: int) -> Callable[[Case, torch.dtype], int]:
    """Bytes for an op that reads or writes `tensors` full-size tensors once each."""

    def count(case: Case, dtype: torch.dtype) -> int:
        return tensors * numel(case.shape) * dtype.itemsize

    return count


def last_dim(case: Case) -> int:
    """Length of the last dimension (the reduced size of row-wise ops)."""
    return case.shape[-1]


def rows(shape: tuple[int, ...]) -> tuple[int, int]:
    """(number of rows, row length) of a tensor seen as rows along its last dim."""
    n = shape[-1]
    return numel(shape) // n, n
