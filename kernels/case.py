"""A case: one shape (plus op parameters) an op is checked or timed at.

Its own module so that whatever makes cases (the fixed lists in kernels/spec.py, the seeded
random draws in kernels/random_shapes.py) can share it without importing each other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Case:
    """One shape (plus op parameters) to check; `id` is what tables and test ids show."""

    shape: tuple[int, ...]
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        text = "x".join(str(n) for n in self.shape)
        extra = ",".join(f"{k}={v}" for k, v in self.params.items())
        return f"{text}[{extra}]" if extra else text


def numel(shape: tuple[int, ...]) -> int:
    """Product of a shape's dimensions."""
    total = 1
    for n in shape:
        total *= n
    return total
