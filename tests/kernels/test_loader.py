"""Loading backends by path: both FlagGems forms, backend_utils provided, problems per op."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from flagbot.kernels import backend_utils
from flagbot.kernels.loader import Backend, BackendLoadError, BackendMissing, load_backend


def test_specific_ops_form_pairs_aten_names_with_specs(planted: Backend) -> None:
    assert planted.form == "specific_ops" and planted.vendor_name == "planted"
    kinds = {op.aten: (op.name, op.kind, op.autograd) for op in planted.ops}
    assert kinds["add.Tensor"] == ("add", "override", "disable")
    assert kinds["frobnicate.default"][1] == "unknown"
    assert planted.unused_ops == ["cumsum"]


def test_unknown_aten_name_is_reported_with_the_next_step(planted: Backend) -> None:
    unknown = next(op for op in planted.ops if op.kind == "unknown")
    assert unknown.error is not None and "kernels/registry.py" in unknown.error


def test_exported_functions_form_matches_generic_names(planted_dir: Path) -> None:
    backend = load_backend(planted_dir / "_exported")
    assert backend.form == "exported_functions"
    assert [(op.name, op.kind) for op in backend.ops] == [("softmax", "override"),
                                                          ("sum", "override")]
    assert backend.unused_ops == ["mean_dim"]


def test_nvidia_backend_overrides_four_generic_ops(nvidia: Backend) -> None:
    kinds = {op.name: op.kind for op in nvidia.ops}
    assert kinds == {"softmax": "override", "rms_norm": "override", "mm": "override",
                     "log_softmax": "override"}
    assert nvidia.vendor_name == "nvidia" and nvidia.device_name == "cuda"


def test_backend_utils_is_the_harness_module(planted: Backend) -> None:
    assert sys.modules["backend_utils"] is backend_utils  # registered by loading a backend


def test_missing_backend_is_a_usage_problem(tmp_path: Path) -> None:
    with pytest.raises(BackendMissing, match="not a backend folder"):
        load_backend(tmp_path / "_nowhere")


def test_backend_whose_import_fails_names_the_error(planted_dir: Path) -> None:
    with pytest.raises(BackendLoadError, match="ModuleNotFoundError"):
        load_backend(planted_dir / "_broken")


def test_same_backend_loads_twice_without_clashing(planted_dir: Path) -> None:
    first, second = load_backend(planted_dir / "_exported"), load_backend(planted_dir / "_exported")
    assert first.ops[0].func is not second.ops[0].func


def test_backend_missing_a_required_file_fails_before_its_code_runs(planted_dir: Path,
                                                                    tmp_path: Path) -> None:
    shutil.copytree(planted_dir / "_exported", tmp_path / "_exported")
    (tmp_path / "_exported" / "heuristics_config_utils.py").unlink()
    with pytest.raises(BackendLoadError, match="missing heuristics_config_utils.py"):
        load_backend(tmp_path / "_exported")


def test_loaded_backend_carries_its_expanded_tune_configs(planted: Backend) -> None:
    [config] = planted.tune_configs["tune_configs.yaml"]["unused"]
    assert config["META"] == {"BLOCK": 64} and config["num_warps"] == 4
