"""The one resolver of configured folders, and every command that reads .github/flagbot.yml."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from flagbot.hooks import check_hetero, check_patches, check_routing, check_vendor_backend, cli
from flagbot.hooks.config import CONFIG_PATH, DEFAULTS
from flagbot.hooks.errors import UsageError
from flagbot.hooks.folders import (
    DEFAULT_FOLDERS,
    configured_folder,
    flaggems_package_root,
    hetero_file,
)
from tests.hooks.conftest import MakeRepo, Repo

BROKEN = {
    "yaml": "hardwares: [unclosed\n",
    "value": "hardwares: /etc\n",
    "top-level": "- hardwares\n",
    "package-root": "flaggems:\n  package_root: 5\n",
}

# every `flagbot` subcommand that reads the file, with arguments that get it that far
COMMANDS = {
    "patch": ["patch", "--device-type", "A_X100", "--base-commit-id", "HEAD"],
    "unpatch": ["unpatch", "--device-type", "A_X100", "--commit-id", "aaaa1111"],
    "verify": ["verify"],
    "migrate": ["migrate"],
    "hetero": ["hetero", "check"],
    "check-patches": ["check-patches", "--full"],
    "check-backend": ["check-backend", "--all"],
    "check-routing": ["check-routing"],
}
# the console scripts pre-commit runs
HookMain = Callable[..., int]
HOOKS: dict[str, HookMain] = {
    "check-hetero": check_hetero.main,
    "check-patches": check_patches.main,
    "check-vendor-backend": check_vendor_backend.main,
    "check-routing": check_routing.main,
}


@pytest.fixture(scope="module", params=sorted(BROKEN))
def broken(request: pytest.FixtureRequest, make_repo: MakeRepo) -> Repo:
    repo = make_repo(f"broken-{request.param}")
    repo.write(CONFIG_PATH, BROKEN[request.param])
    repo.commit("broken config")
    return repo


def test_defaults_match_the_config_defaults() -> None:
    assert DEFAULT_FOLDERS == {key: DEFAULTS[key] for key in DEFAULT_FOLDERS}


def test_without_a_config_file_the_defaults_apply(make_repo: MakeRepo) -> None:
    repo = make_repo("no-config")
    assert configured_folder(repo.path, "hardwares") == "hardwares"
    assert configured_folder(repo.path, "backends") == "backends"
    assert flaggems_package_root(repo.path) is None


def test_the_config_file_names_the_folders(make_repo: MakeRepo) -> None:
    repo = make_repo("config")
    repo.write(CONFIG_PATH, "hardwares: hw\nbackends: src/be\nflaggems:\n  package_root: src/fg\n")
    assert configured_folder(repo.path, "hardwares") == "hw"
    assert configured_folder(repo.path, "backends") == "src/be"
    assert flaggems_package_root(repo.path) == "src/fg"


@pytest.mark.parametrize("key, present, expected", [
    ("backends", ["src/flag_gems/runtime/backend"], "src/flag_gems/runtime/backend"),
    ("hardwares", ["hardware"], "hardware"),
    ("hardwares", ["hardware", "hardwares"], "hardwares"),
    ("backends", ["backends", "src/flag_gems/runtime/backend"], "backends"),
    ("hardwares", ["tools/patch"], "hardwares"),
])
def test_without_configuration_the_layout_present_is_used(
        make_repo: MakeRepo, key: str, present: list[str], expected: str) -> None:
    repo = make_repo("detect")
    for folder in present:
        (repo.path / folder).mkdir(parents=True)
    assert configured_folder(repo.path, key) == expected  # type: ignore[arg-type]


def test_a_folder_the_config_names_beats_the_layout_present(make_repo: MakeRepo) -> None:
    repo = make_repo("explicit")
    (repo.path / "hardware").mkdir()
    (repo.path / "src/flag_gems/runtime/backend").mkdir(parents=True)
    repo.write(CONFIG_PATH, "hardwares: hardwares\n")
    assert configured_folder(repo.path, "hardwares") == "hardwares"
    assert configured_folder(repo.path, "backends") == "src/flag_gems/runtime/backend"


@pytest.mark.parametrize("files, expected", [
    ([], "hardware/hetero.txt"),
    (["tools/patch/hetero.txt"], "tools/patch/hetero.txt"),
    (["flagscale/patch/hetero.txt"], "flagscale/patch/hetero.txt"),
    (["tools/patch/hetero.txt", "hardware/hetero.txt"], "hardware/hetero.txt"),
])
def test_hetero_txt_is_beside_the_patches_else_where_the_seed_tools_kept_it(
        make_repo: MakeRepo, files: list[str], expected: str) -> None:
    repo = make_repo("hetero")
    for rel in files:
        repo.write(rel, "")
    assert hetero_file(repo.path, "hardware") == expected


def test_a_folder_given_on_the_command_line_wins_without_reading_the_file(broken: Repo) -> None:
    assert configured_folder(broken.path, "hardwares", "given") == "given"


def test_a_broken_file_is_a_usage_error_naming_file_and_way_out(broken: Repo) -> None:
    with pytest.raises(UsageError) as info:
        configured_folder(broken.path, "backends", option="--root DIR")
    assert str(info.value).startswith(f"{broken.path / CONFIG_PATH}: ")
    assert info.value.hint == f"fix {CONFIG_PATH}, or pass --root DIR"


def test_an_unreadable_file_is_a_usage_error(make_repo: MakeRepo) -> None:
    repo = make_repo("unreadable")
    repo.write(CONFIG_PATH, b"hardwares: \xff\n")
    with pytest.raises(UsageError, match="cannot read"):
        configured_folder(repo.path, "hardwares")


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_exits_2_on_a_broken_config(
        name: str, broken: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["-C", str(broken.path), *COMMANDS[name]]) == 2
    err = capsys.readouterr().err
    assert f"error: {broken.path / CONFIG_PATH}: " in err
    assert f"hint: fix {CONFIG_PATH}" in err


@pytest.mark.parametrize("name", sorted(HOOKS))
def test_every_hook_exits_2_on_a_broken_config(
        name: str, broken: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    assert HOOKS[name]([], cwd=str(broken.path)) == 2
    err = capsys.readouterr().err
    assert f"error: {broken.path / CONFIG_PATH}: " in err
    assert f"hint: fix {CONFIG_PATH}" in err


def test_layout_for_paths_follows_the_paths_unless_the_file_names_the_folder() -> None:
    from flagbot.hooks.config import RepoConfig
    from flagbot.hooks.folders import layout_for_paths

    plain = RepoConfig()
    flaggems = ["src/flag_gems/runtime/backend/_beta/ops/add.py", "hardware/A_X100/x.patch"]
    found = layout_for_paths(plain, flaggems)
    assert (found.backends, found.hardwares) == ("src/flag_gems/runtime/backend", "hardware")
    assert layout_for_paths(plain, ["backends/_beta/x.py", *flaggems]).backends == "backends"
    assert layout_for_paths(plain, ["README.md"]) is plain
    named = RepoConfig(raw={**plain.raw, "backends": "vendors"}, given=frozenset({"backends"}))
    assert layout_for_paths(named, flaggems).backends == "vendors"
