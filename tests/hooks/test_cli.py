from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

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


def buffered_env() -> dict[str, str]:
    """The environment without PYTHONUNBUFFERED: stdout to a pipe is then block-buffered, so
    short output reaches the pipe only when flushed (tox does not pass the variable on)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}


@pytest.mark.parametrize("command", [
    ["--help"],
    ["patch", "--help"],  # argparse's help leaves by SystemExit, past the return-path flush
    ["check-backend", "--format", "json", "testing/resources/backends/clean/_beta"],
])
def test_a_reader_that_closes_the_pipe_early_gets_no_traceback(command: list[str]) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # as `| head -c1` does once it has its byte
    try:
        proc = subprocess.run([sys.executable, "-m", "flagbot.hooks.cli", *command],
                              cwd=Path(__file__).parents[2], stdout=write_end, env=buffered_env(),
                              stderr=subprocess.PIPE, text=True, check=False)
    finally:
        os.close(write_end)
    assert proc.returncode == 141
    assert proc.stderr == ""


@pytest.mark.parametrize("args", [["--format", "json", "testing/resources/backends/clean/_beta"],
                                  ["--help"]])
def test_the_console_script_of_a_hook_handles_a_closed_pipe_too(args: list[str]) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    code = ("import sys; from flagbot.hooks.check_vendor_backend import main; "
            f"sys.exit(main({args!r}))")
    try:
        proc = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).parents[2],
                              stdout=write_end, stderr=subprocess.PIPE, text=True, check=False,
                              env=buffered_env())
    finally:
        os.close(write_end)
    assert (proc.returncode, proc.stderr) == (141, "")
