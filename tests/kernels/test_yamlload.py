"""yamlload: the values of `yaml.safe_load`, plus lines and duplicate keys."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from flagbot.kernels.yamlload import YDict, YList, load_yaml

ROOT = Path(__file__).resolve().parents[2]
TUNE_FILES = sorted([*ROOT.glob("backends/_*/tune_configs.yaml"),
                     *ROOT.glob("testing/resources/backends/**/tune_configs.yaml")])

# Forms where a hand-written reader and YAML 1.1 (PyYAML, FlagGems) disagree.
TRICKY = {
    "octal": "a: 0777\nb: 0o17\nc: 0x1F\nd: 1_000\n",
    "floats": "a: 1e3\nb: 1.0e3\nc: .5\nd: .nan\ne: -.inf\nf: 1_0.5\n",
    "booleans": "a: yes\nb: On\nc: off\nd: y\ne: n\nf: TRUE\n",
    "nulls": "a: ~\nb: null\nc:\nd: Null\n",
    "quoting": "a: '1'\nb: \"2\"\nc: 'it''s'\nd: \"tab\\tnew\\nline \\u00e9\"\ne: '#x' # c\n",
    "block-scalars": "a: |\n  x\n  y\nb: >-\n  folded\n  text\n",
    "sexagesimal": "a: 1:30\nb: 190:20:30.15\n",
    "timestamp": "a: 2026-11-26\n",
    "tags": "a: !!str 123\nb: !!int '7'\nc: !!float 2\n",
    "anchors": "base: &b {BLOCK: 64, num_warps: 4}\nop:\n  - <<: *b\n    num_warps: 8\n  - *b\n",
    "merge-list": "x: &x {a: 1}\ny: &y {a: 2, b: 2}\nz:\n  <<: [*x, *y]\n  c: 3\n",
    "set-omap": "s: !!set {a, b}\no: !!omap [x: 1, y: 2]\n",
    "flow": "op: [{META: {B: 1}, num_warps: 4}, {gen: true, param_map: {META: l}, l: [{B: 2}]}]\n",
    "keys": "1: int\n1.5: float\nyes: bool\n~: null\n",
    "empty": "",
    "comment-only": "# nothing\n",
}


def _same(a: Any, b: Any) -> bool:
    """Equality that counts nan as equal to nan."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_values_are_those_of_safe_load(name: str) -> None:
    loaded = load_yaml(TRICKY[name])
    assert loaded.error is None and _same(loaded.data, yaml.safe_load(TRICKY[name]))


@pytest.mark.parametrize("path", TUNE_FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_tune_file_in_the_repository_reads_as_safe_load_reads_it(path: Path) -> None:
    text = path.read_text()
    loaded = load_yaml(text)
    try:
        expected = yaml.safe_load(text)
    except yaml.YAMLError:
        assert loaded.error is not None
        return
    assert loaded.error is None and _same(loaded.data, expected)


def test_yaml_1_1_scalars_are_not_read_as_yaml_1_2() -> None:
    data = load_yaml(TRICKY["octal"] + "e: 1e3\nf: on\n").data
    assert (data["a"], data["e"], data["f"]) == (511, "1e3", True)


def test_lines_of_mappings_keys_and_items() -> None:
    data = load_yaml("op:\n  - META: {B: 1}\n\n  - gen: true\n").data
    assert isinstance(data, YDict) and data.key_lines == {"op": 1}
    entries = data["op"]
    assert isinstance(entries, YList) and entries.item_lines == [2, 4]
    assert entries[1].line == 4 and entries[0]["META"].line == 2


def test_duplicate_keys_at_any_depth_keep_the_last_value_and_both_lines() -> None:
    loaded = load_yaml("a:\n  b: 1\n  b: 2\na: 3\n")
    assert loaded.data == {"a": 3}
    assert loaded.duplicates == [(3, "b (first at line 2)"), (4, "a (first at line 1)")]


def test_merged_keys_are_not_duplicates() -> None:
    loaded = load_yaml(TRICKY["anchors"])
    assert loaded.duplicates == [] and loaded.data["op"][0] == {"BLOCK": 64, "num_warps": 8}


@pytest.mark.parametrize(("text", "line"), [
    ("a: [1, 2\nb: 3\n", 2),
    ("a: 1\n---\nb: 2\n", 2),
    ("a: *nowhere\n", 1),
    ("a: &x 1\nb: &x 2\n", 2),
    ("? [1, 2]\n: x\n", 1),
    ("a: !!python/name:os.system x\n", 1),
    ("a:\n\tb: 1\n", 2),
], ids=["unclosed", "two-documents", "undefined-alias", "duplicate-anchor", "unhashable-key",
        "unsafe-tag", "tab"])
def test_what_safe_load_rejects_is_an_error_with_its_line(text: str, line: int) -> None:
    with pytest.raises(yaml.YAMLError):
        yaml.safe_load(text)
    loaded = load_yaml(text)
    assert loaded.error is not None and loaded.error[0] == line, loaded.error
