"""backend_utils: FlagGems' names and tune_configs.yaml turned into triton.Config lists."""

from __future__ import annotations

from pathlib import Path

import pytest

from flagbot.kernels import backend_utils
from flagbot.kernels.backend_utils import TuneConfigError, get_tuned_config


def test_autograd_and_vendor_info_have_flaggems_fields() -> None:
    info = backend_utils.VendorInfoBase(vendor_name="x", device_name="cuda",
                                        device_query_cmd="x-smi")
    assert info.dispatch_key is None and backend_utils.Autograd.disable.value is False


def test_interpreter_pins_the_first_config(tmp_path: Path) -> None:
    path = tmp_path / "tune_configs.yaml"
    path.write_text("op:\n  - META: {B: 1}\n  - META: {B: 2}\n    num_warps: 8\n")
    configs = get_tuned_config("op", path)
    expected = 1 if backend_utils.interpreted() else 2
    assert len(configs) == expected and configs[0].kwargs == {"B": 1}
    assert configs[0].num_warps == 4 and configs[0].num_stages == 2


def test_keys_flaggems_ignores_do_not_reach_triton(tmp_path: Path) -> None:
    path = tmp_path / "tune_configs.yaml"
    path.write_text("op:\n  - META: {B: 1}\n    multibuffer: true\n    num_ldmatrixes: 1\n")
    [config] = get_tuned_config("op", path)
    assert config.kwargs == {"B": 1} and not hasattr(config, "multibuffer")


def test_missing_op_key_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "tune_configs.yaml"
    path.write_text("other:\n  - META: {B: 1}\n")
    with pytest.raises(TuneConfigError, match="no entry for 'op'"):
        get_tuned_config("op", path)


def test_a_broken_entry_of_another_op_fails_as_it_fails_flaggems_import(tmp_path: Path) -> None:
    path = tmp_path / "tune_configs.yaml"
    path.write_text("op:\n  - META: {B: 1}\nother:\n  - num_warps: 3\n")
    with pytest.raises(TuneConfigError, match=r"tune_configs.yaml:4: other: an explicit entry"):
        get_tuned_config("op", path)
