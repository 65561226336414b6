"""Where a repository keeps its hardwares/ and backends/ folders: the one resolver.

Every command and hook asks here; a folder given on the command line wins, then
`.github/flagbot.yml`, then the default. A config file that is present but broken is a usage
error (exit 2) naming the file, every problem in it and the way out, never a silent fallback
to the defaults: checking the wrong folder would pass where it should fail.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from flagbot.hooks.errors import UsageError

if TYPE_CHECKING:  # imported lazily: without a config file `flagbot patch` never loads PyYAML
    from flagbot.hooks.config import RepoConfig

CONFIG_PATH = ".github/flagbot.yml"  # = hooks.config.CONFIG_PATH (tests/hooks/test_folders.py)
# = hooks.config.DEFAULTS for these keys (tests/hooks/test_folders.py keeps them equal)
DEFAULT_FOLDERS = {"hardwares": "hardwares", "backends": "backends"}

Folder = Literal["hardwares", "backends"]


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
    """`given`, else `key` from `.github/flagbot.yml`, else its default; UsageError if broken."""
    if given:
        return given
    config = repo_config(repo, option=option)
    return DEFAULT_FOLDERS[key] if config is None else str(config[key])


def flaggems_package_root(repo: Path, *, option: str | None = None) -> str | None:
    """`flaggems.package_root` from `.github/flagbot.yml` (a folder), or None when unset."""
    config = repo_config(repo, option=option)
    root = None if config is None else config["flaggems"].get("package_root")
    return None if root is None else str(root)
