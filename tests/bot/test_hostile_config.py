"""A pull request cannot choose its rules or reach host paths through configuration: the
checkers use the default branch's `.github/flagbot.yml`, YAML aliases are bounded, rejected
values are shown cut short, and no configured path resolves outside the checkout."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from flagbot.hooks.check_vendor_backend import check_backends
from flagbot.hooks.config import ConfigError, RepoConfig, parse_config
from flagbot.hooks.errors import UsageError
from flagbot.kernels.yamlload import load_yaml
from testing.backend_corpus import build_clean
from tests.bot.handlers_support import clean_backend, deliver, open_pr, runs_by_name

# nine anchors of nine aliases each: 9**9 (387 million) leaves once expanded, 589 bytes
BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
    for p, c in zip("abcdefgh", "bcdefghi", strict=True))


def test_an_alias_bomb_in_the_config_is_refused_at_once() -> None:
    started = time.monotonic()
    with pytest.raises(ConfigError) as err:
        parse_config(BOMB + "hardwares: *i\n")
    assert time.monotonic() - started < 2 and "aliases expand" in str(err.value)
    assert len(str(err.value)) < 600


def test_an_alias_bomb_in_a_tune_file_is_a_yaml_error() -> None:
    loaded = load_yaml(BOMB)
    assert loaded.data is None and "aliases expand" in loaded.error[1]


def test_ordinary_aliases_and_merges_still_load() -> None:
    config = parse_config("labels:\n  vendor: &v\n    pattern: 'hw: {device}'\n"
                          "    color: 0e8a16\n")
    assert config["labels"]["vendor"]["pattern"] == "hw: {device}"


def test_a_rejected_value_is_shown_cut_short() -> None:
    with pytest.raises(ConfigError) as err:
        parse_config("hardwares: [" + ", ".join(["x" * 50] * 2000) + "]\n")
    assert len(str(err.value)) < 300


@pytest.mark.parametrize("root", ["/etc", "../..", "a/../../b", "C:/x"])
def test_flaggems_package_root_must_be_inside_the_repository(root: str) -> None:
    with pytest.raises(ConfigError, match="flaggems.package_root"):
        parse_config(f"flaggems:\n  package_root: '{root}'\n")


def test_the_checker_given_a_config_resolves_nothing_outside_the_checkout(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    build_clean(repo)
    config = RepoConfig()
    config.raw["flaggems"]["package_root"] = "../host"  # a config that got past validation
    (tmp_path / "host" / "runtime").mkdir(parents=True)
    (tmp_path / "host" / "runtime" / "common.py").write_text("class vendors: pass\n")
    with pytest.raises(UsageError, match="not inside the repository"):
        check_backends(repo, ["backends/_acme"], config=config)


def test_the_flaggems_search_stops_at_the_checkout(tmp_path: Path) -> None:
    # a FlagGems package around the checkout (the host's) must not become the checker's context
    host = tmp_path / "host"
    (host / "runtime").mkdir(parents=True)
    (host / "__init__.py").write_text("")
    (host / "runtime" / "common.py").write_text("class vendors(Enum):\n    OTHER = 1\n")
    repo = host / "checkout"
    build_clean(repo)
    findings = check_backends(repo, ["backends/_acme"], config=RepoConfig())
    assert not [f for f in findings if f.rule == "vendor-not-registered"], findings


def test_the_pull_requests_own_config_is_never_read(emu, settings) -> None:
    repo = emu.create_repo("flagos/FlagGems", files={"README.md": "x\n", **clean_backend()})
    pr = open_pr(emu, repo, {
        ".github/flagbot.yml": "flaggems:\n  package_root: elsewhere\n",
        "backends/_beta/ops/extra.py": "def extra():\n    return 1\n"})
    started = time.monotonic()
    deliver(emu, settings, repo, pr["number"])
    run = runs_by_name(emu, repo, pr["head"]["sha"])["flagbot / backends"]
    assert run["conclusion"] == "success", run["output"]
    assert time.monotonic() - started < 30
