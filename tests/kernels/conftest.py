"""Kernel tests run on Triton's CPU interpreter unless a CUDA device is present.

TRITON_INTERPRET must be set before the first @triton.jit runs (it is read at decoration),
so this happens at conftest import, before any test module imports flagbot.kernels.ops.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402

from flagbot.kernels.loader import Backend, load_backend  # noqa: E402
from flagbot.kernels.ops import _mm_memo  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PLANTED = HERE / "backends"


@pytest.fixture(scope="session")
def device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


@pytest.fixture(scope="session")
def planted_dir() -> Path:
    return PLANTED


@pytest.fixture(scope="session")
def nvidia() -> Backend:
    return load_backend(ROOT / "backends" / "_nvidia")


@pytest.fixture(scope="session")
def planted() -> Backend:
    return load_backend(PLANTED / "_planted")


@pytest.fixture()
def in_tmp(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path


@pytest.fixture(autouse=True)
def fresh_mm_picks() -> Iterator[None]:
    """mm remembers its picks per geometry; tests that change its rules must not see earlier
    tests' picks, nor leave theirs behind."""
    _mm_memo.clear()
    yield
    _mm_memo.clear()
