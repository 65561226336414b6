"""The README's two fresh-machine commands are the contract with users and CI: keep them true."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```sh\n(.+?)\n```", text)


def test_readme_opens_with_two_commands() -> None:
    commands = readme_commands()
    assert len(commands) >= 2
    assert "flagbot serve" in commands[0]
    assert "pytest" in commands[1]


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert readme_commands()[1] in ci.splitlines()


def test_ci_runs_lint_after_the_readme_command() -> None:
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    readme = lines.index(readme_commands()[1])
    assert any(".venv/bin/tox -e lint" in line for line in lines[readme + 1:])


def test_the_readme_says_what_hooks_testing_and_tests_hold() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    hooks_row = next(line for line in text.splitlines() if line.startswith("| local | `hooks/`"))
    assert "not only pre-commit hooks" in hooks_row
    for folder in ("tests/", "testing/", "examples/"):
        assert re.search(rf"^\| `{folder}` \| .+ \|$", text, re.M), folder
