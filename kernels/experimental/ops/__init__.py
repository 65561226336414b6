"""The imported operators as `get_specific_ops()` entries, read from ../_metadata.json."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from flagbot.kernels.intake.experimental import specific_ops


def get_specific_ops() -> list[tuple[str, Callable[..., Any]]]:
    """(aten name, function) of every operator in the index."""
    return specific_ops(Path(__file__).resolve().parents[1])
