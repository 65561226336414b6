"""docs/reference.md matches the code: commands and options, config keys, settings, labels,
check runs, slash commands, HTTP endpoints; docs/maintainers.md justifies every App permission."""

from __future__ import annotations

import contextlib
import importlib
import io
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from flagbot.hooks import cli
from flagbot.hooks.config import DEFAULTS

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def section(text: str, heading: str) -> str:
    """The body under `heading` (a whole line), up to the next heading of the same or a higher level."""
    level = len(heading) - len(heading.lstrip("#"))
    lines = text.splitlines()
    start = lines.index(heading) + 1
    body = []
    for line in lines[start:]:
        m = re.match(r"^(#+) ", line)
        if m and len(m.group(1)) <= level:
            break
        body.append(line)
    return "\n".join(body)


def first_column(table: str) -> list[str]:
    """Backticked names in the first column of a Markdown table."""
    names = []
    for line in table.splitlines():
        cells = line.split("|")
        if len(cells) > 2 and (m := re.fullmatch(r"\s*`([^`]+)`\s*", cells[1])):
            names.append(m.group(1))
    return names


def help_text(*words: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            cli.load_command(words[0])([*words[1:], "--help"])
        except SystemExit:
            pass
    return out.getvalue()


def subcommands(name: str) -> list[str]:
    """The choices of a positional `{a,b}` in the usage line (an option's choices follow it)."""
    tokens = help_text(name).split("\n\n", 1)[0].split()
    for i, token in enumerate(tokens):
        is_choice = re.fullmatch(r"\{[a-z,-]+\}\]?", token)
        after_option = tokens[i - 1].lstrip("[").startswith("-") and not tokens[i - 1].endswith("]")
        if is_choice and not after_option:
            return token.strip("{}]").split(",")
    return []


@pytest.mark.parametrize("name", sorted(cli.COMMANDS))
def test_every_command_and_option_is_in_the_reference(name: str) -> None:
    heading = f"### `flagbot {name}`"
    assert heading in REFERENCE.splitlines(), f"docs/reference.md lacks a section {heading!r}"
    documented = set(OPTION.findall(section(REFERENCE, heading)))
    actual = set(OPTION.findall(help_text(name)))
    for sub in subcommands(name):
        assert f"#### `flagbot {name} {sub}`" in REFERENCE.splitlines()
        actual |= set(OPTION.findall(help_text(name, sub)))
    assert documented == actual - {"--help"}


def flat_keys(mapping: dict[str, Any], prefix: str = "") -> set[str]:
    """Dotted keys of the leaves (an empty mapping, such as `devices`, is a leaf)."""
    keys = set()
    for key, value in mapping.items():
        if isinstance(value, dict) and value:
            keys |= flat_keys(value, f"{prefix}{key}.")
        else:
            keys.add(prefix + key)
    return keys


def test_every_config_key_is_in_the_reference() -> None:
    documented = set(first_column(section(REFERENCE, "## Repository configuration (`.github/flagbot.yml`)")))
    code = flat_keys(DEFAULTS)
    assert code <= documented
    assert {k for k in documented if "<" not in k} <= code


def test_every_server_setting_is_in_the_reference() -> None:
    from tests.bot.test_deploy import settings_keys

    documented = set(first_column(section(REFERENCE, "## Server settings (environment)")))
    assert documented == settings_keys()


def test_labels_are_the_configured_defaults() -> None:
    from flagbot.bot.chores.drift import LABEL as DRIFT  # on the bot's issues, not configurable

    documented = set(first_column(section(REFERENCE, "## Labels")))
    labels = DEFAULTS["labels"]
    assert documented == {DRIFT.name, labels["privateuse1"]["name"],
                          labels["needs_ok_to_test"]["name"],
                          labels["vendor"]["pattern"].replace("{device}", "<DEV>"),
                          labels["device"]["pattern"].replace("{device}", "<DEV>"),
                          labels["ci"]["pattern"].replace("{device}", "<device>")}


def test_check_runs_are_the_handlers_names() -> None:
    from flagbot.bot.handlers import backends, patches, plugins, routing

    documented = set(first_column(section(REFERENCE, "## Check runs")))
    names = {patches.NAME, backends.NAME, plugins.NAME, routing.NAME}
    kernels = importlib.util.find_spec("flagbot.bot.handlers.kernels")
    if kernels is not None:
        names.add(importlib.import_module("flagbot.bot.handlers.kernels").NAME)
    assert {n for n in documented if "<" not in n} == {n for n in names if "{" not in n}


def test_slash_commands_match_the_registry() -> None:
    from flagbot.bot.commands.registry import COMMANDS

    documented = {re.match(r"/([a-z-]+)", n).group(1)
                  for n in first_column(section(REFERENCE, "## Slash commands"))}
    assert documented == {name.lstrip("/") for name in COMMANDS}


def test_http_endpoints_are_the_app_routes(tmp_path: Path) -> None:
    from flagbot.bot.entry.serving import fastpath
    from flagbot.bot.entry.web import create_app
    from flagbot.bot.settings import Settings

    app = create_app(Settings(state_dir=tmp_path))
    routes = {(m, r.rule.split("<")[0]) for r in app.url_map.iter_rules() if r.endpoint != "static"
              for m in r.methods or () if m in ("GET", "POST")}
    routes.add(("POST", fastpath.PATH))  # the webhook's one route, in front of Flask
    documented = {(n.split()[0], n.split()[1].split("<")[0])
                  for n in first_column(section(REFERENCE, "## HTTP endpoints"))}
    assert documented == routes


def test_every_app_permission_and_event_is_justified_in_the_maintainers_guide() -> None:
    from flagbot.bot.dispatch import HANDLERS

    manifest = yaml.safe_load((ROOT / "bot" / "admin" / "app.yml").read_text())
    guide = section((ROOT / "docs" / "maintainers.md").read_text(), "### Permissions and events")
    justified = set(first_column(guide))
    assert set(manifest["default_permissions"]) | set(manifest["default_events"]) == justified
    assert set(HANDLERS) <= set(manifest["default_events"])
