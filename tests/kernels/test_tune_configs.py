"""tune_configs: the one reading of tune_configs.yaml (problems with lines, expansion)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from flagbot.kernels.flaggems_layout import LAUNCH_DEFAULTS, tune_files
from flagbot.kernels.tune_configs import (
    TuneConfigError,
    check_entries,
    expand,
    load_backend_tunes,
    read_tune,
)

ROOT = Path(__file__).resolve().parents[2]


def _rules(text: str) -> list[tuple[str, int]]:
    return [(p.rule, p.line) for p in read_tune(text).problems]


def test_explicit_entry_gets_flaggems_defaults() -> None:
    [cfg] = expand("op", [{"META": {"BLOCK": 64}, "num_warps": 8}])
    assert cfg == {**LAUNCH_DEFAULTS, "META": {"BLOCK": 64}, "num_warps": 8}


def test_generator_entry_expands_the_cartesian_product() -> None:
    entry = {"gen": True, "param_map": {"META": {"BLOCK": "blocks"}, "num_warps": "warps"},
             "blocks": [256, 512], "warps": [4, 8]}
    configs = expand("op", [entry])
    assert [(c["META"]["BLOCK"], c["num_warps"]) for c in configs] == [
        (256, 4), (256, 8), (512, 4), (512, 8)]


def test_generator_takes_inline_lists_integers_and_lists_of_meta_mappings() -> None:
    entry = {"gen": True, "param_map": {"META": [{"B": 1}, {"B": 2}], "num_stages": 3,
                                        "num_warps": [2, 4]}}
    configs = expand("op", [entry])
    assert [(c["META"], c["num_stages"], c["num_warps"]) for c in configs] == [
        ({"B": 1}, 3, 2), ({"B": 1}, 3, 4), ({"B": 2}, 3, 2), ({"B": 2}, 3, 4)]


@pytest.mark.parametrize(("entries", "message"), [
    ([{"num_warps": 4}], "needs a META mapping"),
    ([{"META": {"B": 1}, "num_warps": 3}], "power of two"),
    ([{"META": {"B": 1}, "num_stages": "2"}], "must be an integer"),
    ([{"gen": True, "param_map": {"META": {"B": "nope"}}}], "'nope', which is not a non-empty list"),
    ([{"gen": False, "param_map": {"META": [{"B": 1}]}}], "gen must be true"),
    ([{"gen": True, "param_map": {"META": {"B": [1]}, "num_warps": 2.0}}], "must name a list"),
    ([], "non-empty list"),
    (["META"], "each entry must be a mapping"),
], ids=["no-meta", "warps-3", "string-stages", "gen-missing-list", "gen-false", "float-ref",
        "empty", "not-a-mapping"])
def test_bad_entries_are_errors_naming_the_op(entries: list[Any], message: str) -> None:
    with pytest.raises(TuneConfigError, match=message) as info:
        expand("mm", entries)
    assert str(info.value).startswith("tune_configs.yaml: mm: ")


def test_keys_flaggems_ignores_are_warnings_and_do_not_stop_loading() -> None:
    entries = [{"META": {"B": 1}, "multibuffer": True},
               {"gen": True, "param_map": {"META": {"B": [2]}, "unroll": 2}}]
    problems = check_entries("op", entries)
    assert [(p.rule, p.fatal) for p in problems] == [("tune-unknown-key", False)] * 2
    assert [c["META"] for c in expand("op", entries)] == [{"B": 1}, {"B": 2}]


def test_problems_carry_the_lines_of_the_offending_keys() -> None:
    text = "op:\n  - META: {B: 1}\n    num_warps: 6\n  - num_stages: 2\nother: []\n"
    assert _rules(text) == [("tune-schema", 3), ("tune-schema", 4), ("tune-schema", 5)]


def test_errors_in_a_block_a_duplicate_key_hides_are_still_reported() -> None:
    text = "op:\n  - META: {B: 1}\n    num_warps: 6\nop:\n  - META: {B: 2}\n"
    problems = read_tune(text).problems
    assert [(p.rule, p.line) for p in problems] == [("yaml-duplicate-key", 4), ("tune-schema", 3)]
    assert "first `op` block, line 1, which the duplicate key hides" in problems[1].message


@pytest.mark.parametrize(("text", "rule"), [
    ("", "tune-schema"), ("- a\n", "tune-schema"), ("a: [1\n", "yaml-syntax"),
    ("a: 1\n---\nb: 2\n", "yaml-syntax"), ("a:\n  - META: {B: 1}\na: []\n", "yaml-duplicate-key"),
], ids=["empty", "a-list", "unclosed", "two-documents", "duplicate"])
def test_files_flaggems_cannot_use_are_fatal(text: str, rule: str) -> None:
    tune = read_tune(text)
    assert rule in {p.rule for p in tune.errors}


def test_backend_tunes_include_every_arch_candidate_and_need_the_vendor_file(tmp_path: Path) -> None:
    (tmp_path / "gen9").mkdir()
    (tmp_path / "gen9" / "tune_configs.yaml").write_text("mm:\n  - META: {B: 1}\n")
    (tmp_path / "ops").mkdir()
    (tmp_path / "ops" / "tune_configs.yaml").write_text("not: [read\n")
    assert tune_files(tmp_path) == [tmp_path / "tune_configs.yaml", tmp_path / "gen9/tune_configs.yaml"]
    with pytest.raises(TuneConfigError, match="tune_configs.yaml: missing") as info:
        load_backend_tunes(tmp_path)
    assert [(src, p.rule) for src, p in info.value.problems] == [("tune_configs.yaml", "required-file")]
    (tmp_path / "tune_configs.yaml").write_text("add:\n  - META: {B: 1}\n")
    assert set(load_backend_tunes(tmp_path)) == {"tune_configs.yaml", "gen9/tune_configs.yaml"}


@pytest.mark.parametrize("vendor", ["_nvidia", "_template"])
def test_shipped_backends_load(vendor: str) -> None:
    tunes = load_backend_tunes(ROOT / "backends" / vendor)
    assert tunes["tune_configs.yaml"]
