"""backend_utils: FlagGems' names, tune_configs.yaml expansion, the YAML subset reader."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from flagbot.kernels import backend_utils
from flagbot.kernels.backend_utils import TuneConfigError, expand, get_tuned_config
from flagbot.kernels.yamlite import YamlError, loads

ROOT = Path(__file__).resolve().parents[2]
TUNE_FILES = sorted(ROOT.glob("backends/_*/tune_configs.yaml"))


def test_autograd_and_vendor_info_have_flaggems_fields() -> None:
    info = backend_utils.VendorInfoBase(vendor_name="x", device_name="cuda",
                                        device_query_cmd="x-smi")
    assert info.dispatch_key is None and backend_utils.Autograd.disable.value is False


def test_explicit_entry_gets_flaggems_defaults() -> None:
    [cfg] = expand("op", [{"META": {"BLOCK": 64}, "num_warps": 8}], "f.yaml")
    assert cfg == {"META": {"BLOCK": 64}, "num_warps": 8, "num_stages": 2, "num_ctas": 1,
                   "maxnreg": None}


def test_generator_entry_expands_the_cartesian_product() -> None:
    entry = {"gen": True, "param_map": {"META": {"BLOCK": "blocks"}, "num_warps": "warps"},
             "blocks": [256, 512], "warps": [4, 8]}
    configs = expand("op", [entry], "f.yaml")
    assert [(c["META"]["BLOCK"], c["num_warps"]) for c in configs] == [
        (256, 4), (256, 8), (512, 4), (512, 8)]


@pytest.mark.parametrize(("entries", "message"), [
    ([{"num_warps": 4}], "needs a META mapping"),
    ([{"META": {"B": 1}, "num_warps": 3}], "power of two"),
    ([{"META": {"B": 1}, "warps": 4}], "unknown keys"),
    ([{"gen": True, "param_map": {"META": {"B": "nope"}}}], "not a list"),
    ([], "non-empty list"),
], ids=["no-meta", "warps-3", "typo-key", "gen-missing-list", "empty"])
def test_bad_entries_are_errors_naming_the_op(entries: list[object], message: str) -> None:
    with pytest.raises(TuneConfigError, match=message):
        expand("mm", entries, "tune_configs.yaml")


def test_interpreter_pins_the_first_config(tmp_path: Path) -> None:
    path = tmp_path / "tune_configs.yaml"
    path.write_text("op:\n  - META: {B: 1}\n  - META: {B: 2}\n")
    configs = get_tuned_config("op", path)
    expected = 1 if backend_utils.interpreted() else 2
    assert len(configs) == expected and configs[0].kwargs == {"B": 1}


def test_missing_op_key_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "tune_configs.yaml"
    path.write_text("other:\n  - META: {B: 1}\n")
    with pytest.raises(TuneConfigError, match="no entry for 'op'"):
        get_tuned_config("op", path)


@pytest.mark.parametrize("path", TUNE_FILES, ids=[p.parent.name for p in TUNE_FILES])
def test_yamlite_reads_the_shipped_tune_files_as_pyyaml_does(path: Path) -> None:
    text = path.read_text()
    assert loads(text) == yaml.safe_load(text)


@pytest.mark.parametrize("text", ["a: 1\na: 2\n", "a: &x 1\n", "a: [1, 2\n", "a:\n\tb: 1\n"],
                         ids=["duplicate", "anchor", "unclosed", "tab"])
def test_yamlite_rejects_what_it_does_not_support(text: str) -> None:
    with pytest.raises(YamlError, match="line"):
        loads(text)
