"""`tox` from a fresh clone: the test environment installs flagbot as the README's command does
(editable: the package-dir mapping is what finds flagbot.hooks & co. next to the checkout's
`flagbot/`), and neither environment relies on PYTHONUNBUFFERED, which tox does not pass on."""

from __future__ import annotations

import configparser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def tox() -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(ROOT / "tox.ini", encoding="utf-8")
    return parser


def test_the_test_environment_installs_editable_like_the_readme() -> None:
    assert tox()["testenv"]["package"] == "editable"


def test_no_environment_needs_pythonunbuffered() -> None:
    for section in tox().sections():
        assert "PYTHONUNBUFFERED" not in " ".join(tox()[section].values()), section


def test_lint_runs_ruff_and_strict_mypy_on_every_side() -> None:
    commands = tox()["testenv:lint"]["commands"]
    assert "ruff check" in commands
    for package in ("-p flagbot.hooks", "-p flagbot.bot", "-p flagbot.kernels"):
        assert package in commands
