"""The README's two fresh-machine commands are the contract with users and CI: keep them true."""

from __future__ import annotations

import re
import subprocess
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


def test_ci_stops_when_the_readme_commands_install_fails() -> None:
    # An && list that fails before its last command does not stop a `set -e` script: .ci/run
    # must check the README command's status itself. Run its lines after that command, with a
    # failing list in its place, and see that the script stops before the lint step.
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    at = lines.index(readme_commands()[1])
    rest = "\n".join(lines[at + 1:]).replace(".venv/bin/tox -e lint", "echo LINT-REACHED")
    script = "set -euo pipefail\nfalse && echo TESTS-RAN\n" + rest + "\n"
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "LINT-REACHED" not in done.stdout and "TESTS-RAN" not in done.stdout
    assert "failed" in done.stderr
    ok = subprocess.run(["bash", "-c", script.replace("false && ", "true && ")],
                        capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and "LINT-REACHED" in ok.stdout


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
