"""The backend checker knows the operators `flagbot kernels import` took in (from their index)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flagbot.hooks import check_vendor_backend as cvb
from flagbot.hooks import experimental_ops
from testing.backend_corpus import FLAGGEMS_ROOT, build_clean

INDEX = {"schema": "flagbot.kernels.experimental/1",
         "ops": {"fast_abs": {"entry": "fast_abs", "aten": ["abs"]},
                 "addx": {"entry": "addx", "aten": ["add.Tensor"]}}}


def test_names_come_from_the_index(tmp_path: Path) -> None:
    index = tmp_path / "_metadata.json"
    index.write_text(json.dumps(INDEX))
    assert experimental_ops.imported_names(index) == {"fast_abs", "abs", "addx", "add.Tensor",
                                                      "add"}


@pytest.mark.parametrize("text", [None, "{broken", '{"ops": 3}'], ids=["absent", "bad", "odd"])
def test_a_missing_or_broken_index_means_no_names(tmp_path: Path, text: str | None) -> None:
    index = tmp_path / "_metadata.json"
    if text is not None:
        index.write_text(text)
    assert experimental_ops.imported_names(index) == frozenset()


def test_an_imported_function_named_in_the_unused_list_is_known(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    root = build_clean(tmp_path, context=True)
    init = tmp_path / FLAGGEMS_ROOT / "_acme" / "__init__.py"
    init.write_text(init.read_text().replace('("cumsum",)', '("cumsum", "fast_abs")'))
    monkeypatch.setattr(experimental_ops, "INDEX", tmp_path / "none.json")
    assert cvb.main(["--all", "--root", root], cwd=str(tmp_path)) == 1
    assert "'fast_abs' matches no generic FlagGems function" in capsys.readouterr().out
    (tmp_path / "index.json").write_text(json.dumps(INDEX))
    monkeypatch.setattr(experimental_ops, "INDEX", tmp_path / "index.json")
    assert cvb.main(["--all", "--root", root], cwd=str(tmp_path)) == 0
