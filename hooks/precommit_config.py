"""What a repository's own `.pre-commit-config.yaml` hides from one of flagbot's hooks.

pre-commit drops every file the top-level `exclude:` or the hook's own `exclude:` matches
(`re.search` on the repository-relative path) before the hook sees the list. FlagScale's
top-level `exclude:` lists `hardware/.*\\.patch` (meant for its formatters), so a patch hook
added to that file is handed no plain patch at all, and it would pass having checked nothing.
The hooks ask this module which stored files the configuration hides and say so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from flagbot.hooks.limits import MAX_SOURCE_BYTES, read_limited
from flagbot.kernels.yamlload import safe_load_bounded

CONFIG_FILE = ".pre-commit-config.yaml"


@dataclass(frozen=True)
class Exclude:
    """One `exclude:` pattern and where it stands ("the top-level `exclude:`")."""

    where: str
    pattern: re.Pattern[str]


def _compile(value: Any, where: str) -> list[Exclude]:
    if not isinstance(value, str) or not value or value == "^$":
        return []
    try:
        return [Exclude(where, re.compile(value))]
    except re.error:
        return []  # pre-commit itself refuses such a file; nothing to say about our hook


def hook_excludes(repo: Path, hook_id: str) -> list[Exclude]:
    """The `exclude:` patterns pre-commit applies to `hook_id` in `repo`'s own config."""
    try:
        text = read_limited(repo / CONFIG_FILE, MAX_SOURCE_BYTES).decode("utf-8", "replace")
        config = safe_load_bounded(text)
    except (OSError, yaml.YAMLError):
        return []
    if not isinstance(config, dict):
        return []
    found = _compile(config.get("exclude"), f"the top-level `exclude:` of {CONFIG_FILE}")
    for entry in config.get("repos") or []:
        for hook in (entry.get("hooks") or []) if isinstance(entry, dict) else []:
            if isinstance(hook, dict) and hook.get("id") == hook_id:
                found += _compile(hook.get("exclude"), f"the `exclude:` of the {hook_id} hook "
                                                       f"in {CONFIG_FILE}")
    return found


def hidden_by(path: str, excludes: list[Exclude]) -> Exclude | None:
    """The first pattern that drops `path` (repository-relative), if any."""
    return next((e for e in excludes if e.pattern.search(path)), None)
