from __future__ import annotations

import importlib

import pytest

from flagbot.hooks import cli


@pytest.mark.parametrize("name", sorted(cli.COMMANDS))
def test_every_command_resolves_to_a_function(name: str) -> None:
    module_name, func_name = cli.COMMANDS[name][0].split(":")
    assert callable(getattr(importlib.import_module(module_name), func_name))


def test_no_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([]) == 2
    assert "usage: flagbot" in capsys.readouterr().out


def test_unknown_command_is_a_usage_error() -> None:
    assert cli.main(["no-such-command"]) == 2


def test_dash_c_needs_an_existing_directory(tmp_path: object) -> None:
    assert cli.main(["-C", "/no/such/dir", "verify"]) == 2
