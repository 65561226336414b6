"""Where a repository keeps its hardwares/ and backends/ folders: the one resolver.

Every command and hook asks here; a folder given on the command line wins, then
`.github/flagbot.yml`, then the first known layout present in the checkout (the default first),
then the default. A config file that is present but broken is a usage error (exit 2) naming
the file, every problem in it and the way out, never a silent fallback to the defaults:
checking the wrong folder would pass where it should fail.

Detection costs a stat per candidate, so commands timed in milliseconds stay that fast.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from flagbot.hooks.errors import UsageError

if TYPE_CHECKING:  # imported lazily: without a config file `flagbot patch` never loads PyYAML
    from flagbot.hooks.config import RepoConfig

CONFIG_PATH = ".github/flagbot.yml"  # = hooks.config.CONFIG_PATH (tests/hooks/test_folders.py)
# = hooks.config.DEFAULTS for these keys (tests/hooks/test_folders.py keeps them equal)
DEFAULT_FOLDERS = {"hardwares": "hardwares", "backends": "backends"}

Folder = Literal["hardwares", "backends"]

# Where real checkouts keep these folders, in the order they are tried when neither the command
# line nor the config file names one. FlagScale stores vendor patches in `hardware/` (the plural
# lived twelve days in 2024, flagbot kept it); FlagGems keeps its vendors in
# src/flag_gems/runtime/backend/_<vendor>/, beside the flag_gems package the checker reads.
KNOWN_LAYOUTS: dict[Folder, tuple[str, ...]] = {
    "hardwares": ("hardwares", "hardware"),
    "backends": ("backends", "src/flag_gems/runtime/backend"),
}
HETERO_NAME = "hetero.txt"  # = hooks.patches.hetero.HETERO_NAME
# Where hetero.txt may live after the patches' own folder: the original FlagScale tools kept it
# beside themselves (tools/patch/), their first draft in flagscale/patch/.
HETERO_PLACES = ("hardwares", "hardware", "tools/patch", "flagscale/patch")


def repo_config(repo: Path, *, option: str | None = None) -> RepoConfig | None:
    """The repository's merged `.github/flagbot.yml`, None without one; UsageError if broken.

    `option` names the command-line flag that would make reading the file unnecessary; the
    error's hint offers it.
    """
    path = repo / CONFIG_PATH
    if not path.is_file():
        return None
    from flagbot.hooks.config import ConfigError, parse_config

    hint = f"fix {CONFIG_PATH}" + (f", or pass {option}" if option else "")
    try:
        return parse_config(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read: {exc}", hint=hint) from exc
    except ConfigError as exc:
        raise UsageError(f"{path}: {exc}", hint=hint) from exc


def configured_folder(repo: Path, key: Folder, given: str | None = None, *,
                      option: str | None = None) -> str:
    """`given`, else `key` from `.github/flagbot.yml`, else the layout found; UsageError if broken."""
    if given:
        return given
    config = repo_config(repo, option=option)
    if config is not None and key in config.given:
        return str(config[key])
    return detect_folder(repo, key)


def detect_folder(repo: Path, key: Folder) -> str:
    """The first of `key`'s known layouts that is a folder in `repo`, else the default."""
    return next((f for f in KNOWN_LAYOUTS[key] if (repo / f).is_dir()), DEFAULT_FOLDERS[key])


def layout_for_paths(config: RepoConfig, paths: Iterable[str]) -> RepoConfig:
    """`config` with each folder the file leaves out pointed at the known layout `paths` use.

    For the bot, which sees a pull request's changed paths rather than a checkout: a FlagGems
    or FlagScale repository without configuration is checked where its vendor folders are,
    never reported as "nothing touched". A folder the file sets, or the default one when the
    paths use it, is kept.
    """
    paths = list(paths)
    raw = None
    for key in ("backends", "hardwares"):
        if key in config.given or any(p.startswith(DEFAULT_FOLDERS[key] + "/") for p in paths):
            continue
        used = next((f for f in KNOWN_LAYOUTS[key][1:]
                     if any(p.startswith(f + "/") for p in paths)), None)
        if used is not None:
            raw = raw or copy.deepcopy(config.raw)
            raw[key] = used
    return config if raw is None else dataclasses.replace(config, raw=raw)


def other_layouts(repo: Path, key: Folder, used: str) -> list[str]:
    """Known folders for `key` other than `used` that exist in `repo` (for "nothing checked")."""
    used = used.strip("/")
    return [f for f in KNOWN_LAYOUTS[key] if f != used and (repo / f).is_dir()]


def config_line(key: Folder, folder: str) -> str:
    """The one line of `.github/flagbot.yml` that points `key` at `folder`."""
    return f"`{key}: {folder}` in {CONFIG_PATH}"


def hetero_file(repo: Path, hardwares: str) -> str:
    """Repository-relative hetero.txt: beside the patches, else where one exists, else beside."""
    beside = f"{hardwares.rstrip('/')}/{HETERO_NAME}"
    if (repo / beside).is_file():
        return beside
    found = (f"{place}/{HETERO_NAME}" for place in HETERO_PLACES)
    return next((rel for rel in found if (repo / rel).is_file()), beside)


def flaggems_package_root(repo: Path, *, option: str | None = None) -> str | None:
    """`flaggems.package_root` from `.github/flagbot.yml` (a folder), or None when unset."""
    config = repo_config(repo, option=option)
    root = None if config is None else config["flaggems"].get("package_root")
    return None if root is None else str(root)
