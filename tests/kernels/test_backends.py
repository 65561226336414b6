"""The shipped backends: accurate on the interpreter, and their kernels use their YAML/heuristics."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
import torch

from flagbot.kernels.check import CheckOptions, Run, check_backend_op
from flagbot.kernels.device import resolve as resolve_device
from flagbot.kernels.loader import Backend, load_backend
from flagbot.kernels.tune_configs import load_tune_file

ROOT = Path(__file__).resolve().parents[2]
OPTIONS = CheckOptions(shapes="ci", seeds=(0,))


def untimed(device: torch.device) -> Run:
    """The op runs on `device` for accuracy only."""
    return Run(resolve_device(str(device)), "not timed here")


@pytest.mark.parametrize("name", ["softmax", "rms_norm", "mm", "log_softmax"])
def test_nvidia_op_is_accurate_on_every_ci_case(nvidia: Backend, name: str,
                                               device: torch.device) -> None:
    op = next(o for o in nvidia.ops if o.name == name)
    entry = check_backend_op(op, OPTIONS, untimed(device))
    assert entry["accuracy"]["status"] == "pass", entry["verdict"]
    assert entry["verdict"]["status"] == "unmeasured"


def test_template_backend_is_accurate(device: torch.device) -> None:
    backend = load_backend(ROOT / "backends" / "_template")
    [op] = backend.ops
    assert check_backend_op(op, OPTIONS, untimed(device))["accuracy"]["status"] == "pass"


@pytest.mark.parametrize(("vendor", "module", "kernel", "key"), [
    ("_nvidia", "mm", "mm_kernel", "mm"),
    ("_template", "silu", "silu_kernel", "silu"),
])
def test_autotuned_kernels_take_their_configs_from_tune_configs_yaml(
        vendor: str, module: str, kernel: str, key: str) -> None:
    backend = load_backend(ROOT / "backends" / vendor)
    ops_module = importlib.import_module(backend.ops[0].func.__module__)  # type: ignore[union-attr]
    package = ops_module.__name__.rsplit(".", 2)[0]
    tuner = getattr(importlib.import_module(f"{package}.ops.{module}"), kernel)
    raw = load_tune_file(ROOT / "backends" / vendor / "tune_configs.yaml")[key]
    assert [c.kwargs for c in tuner.configs] == [c["META"] for c in raw][: len(tuner.configs)]


@pytest.mark.parametrize(("vendor", "key"), [("_nvidia", "softmax"), ("_nvidia", "rms_norm"),
                                             ("_nvidia", "mm"), ("_template", "silu")])
def test_kernels_apply_their_heuristics(vendor: str, key: str) -> None:
    load_backend(ROOT / "backends" / vendor)
    package = next(name for name in importlib.sys.modules  # type: ignore[attr-defined]
                   if name.endswith(f"{vendor}.heuristics_config_utils"))
    heuristics = importlib.import_module(package).HEURISTICS_CONFIGS[key]
    assert heuristics and all(callable(f) for f in heuristics.values())
    source = "\n".join(p.read_text() for p in (ROOT / "backends" / vendor / "ops").glob("*.py"))
    assert f'HEURISTICS_CONFIGS["{key}"]' in source
