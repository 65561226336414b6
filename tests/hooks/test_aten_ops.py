"""aten_ops: the shipped names of several torch releases, release tags and suggestions."""

from __future__ import annotations

import pytest

from flagbot.hooks import aten_ops

YAML = """\
- func: add.Tensor(Tensor self, Tensor other) -> Tensor
  autogen: add.Tensor_out
- func: empty.names(int[] size) -> Tensor
"""


def test_yaml_names_take_func_and_autogen_entries() -> None:
    assert aten_ops.yaml_names(YAML) == {"add.Tensor", "add.Tensor_out", "empty.names"}


def test_render_tags_names_only_some_releases_have() -> None:
    text = aten_ops.render({"2.10": {"add.Tensor", "empty.names"}, "2.13": {"add.Tensor"}},
                           {"Bool.Tensor", "add.Tensor"}, ["test"])
    body = [line for line in text.splitlines() if not line.startswith("#")]
    assert body == ["Bool.Tensor", "add.Tensor", "empty.names 2.10"]
    assert "# releases: 2.10 2.13" in text


def test_shipped_list_covers_the_plugin_releases() -> None:
    assert aten_ops.shipped_releases()[:2] == ("2.10", "2.11")


@pytest.mark.parametrize(("name", "allow_base", "only"), [
    ("empty.names", False, ("2.10", "2.11", "2.12")),
    ("aten::empty.names", False, ("2.10", "2.11", "2.12")),
    ("add.Tensor", False, ()),
    ("align_to", True, ("2.10", "2.11", "2.12")),
    ("add", True, ()),
    ("no_such_op", True, ()),
])
def test_only_in_names_the_releases_having_a_name(name: str, allow_base: bool, only: tuple[str, ...]) -> None:
    assert aten_ops.only_in(name, allow_base=allow_base) == only


def test_bare_base_is_an_op_only_when_allowed() -> None:
    assert not aten_ops.is_aten_op("softmax") and aten_ops.is_aten_op("softmax", allow_base=True)


@pytest.mark.parametrize(("name", "first"), [
    ("sillu.Tensor", "silu"), ("add.Tensr", "add.Tensor"), ("mull.Tensor", "mul.Tensor"),
])
def test_suggestions_match_the_base_name_first(name: str, first: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLAGBOT_NO_TORCH", "1")
    aten_ops.torch_ops.cache_clear()
    assert aten_ops.suggest(name)[0] == first
    aten_ops.torch_ops.cache_clear()


def test_command_line_reports_release_bound_names(capsys: pytest.CaptureFixture[str]) -> None:
    assert aten_ops.main(["empty.names"]) == 0
    assert "only in torch 2.10, 2.11, 2.12" in capsys.readouterr().out
