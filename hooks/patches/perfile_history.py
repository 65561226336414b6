"""FlagScale's `hardware/patch_history.yaml`: checked against the folders, and updated.

The file maps device -> task -> `+`-joined sorted backends (and each single backend) -> the
FlagScale commits the vendor's patches were merged at, oldest first; FlagScale's unpatch takes
the last one. Maintainers append to it after each merged vendor pull request; `record` makes
the same change the maintainers' tool makes (and writes the file the way it does: PyYAML,
insertion order), so the bot can propose it instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from flagbot.hooks.findings import ERROR, WARNING, Finding
from flagbot.hooks.limits import read_limited
from flagbot.hooks.patches.perfile import DIFF_YAML, FLAGSCALE, FULL_ID, HISTORY, TASKS
from flagbot.kernels.yamlload import safe_load_bounded

MAX_HISTORY_BYTES = 1024 * 1024


def history_rel(hardwares: str) -> str:
    return f"{hardwares.strip('/')}/{HISTORY}"


def load(text: str) -> dict[str, Any]:
    """The parsed file (empty when blank); ValueError when it is not a mapping."""
    doc = safe_load_bounded(text) or {}  # aliases cannot expand without bound
    if not isinstance(doc, dict):
        raise ValueError("not a mapping of devices")
    return doc


def check_history(repo: Path, hardwares: str,
                  present: Callable[[list[str]], set[str]], *,
                  allow_missing: bool = False) -> list[Finding]:
    """Every listed device, task and backend has its folder; every commit is a full id here."""
    import yaml

    rel = history_rel(hardwares)
    if not (repo / rel).is_file():
        return []
    try:
        doc = load(read_limited(repo / rel, MAX_HISTORY_BYTES).decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError) as exc:
        return [Finding(rel, 0, ERROR, "perfile-history", f"cannot read it: {exc}")]
    out: list[Finding] = []

    def bad(message: str, severity: str = ERROR) -> None:
        out.append(Finding(rel, 0, severity, "perfile-history", message))

    listed: list[tuple[str, str]] = []
    root = repo / hardwares.strip("/")
    for device, tasks in doc.items():
        if not (root / str(device)).is_dir():
            bad(f"lists device {device!r}, which has no folder under {hardwares}/")
            continue
        for task, keys in (tasks or {}).items() if isinstance(tasks, dict) else ():
            if task not in TASKS:
                bad(f"{device}: task {task!r} is not one of {', '.join(TASKS)}")
            for key, commits in (keys or {}).items() if isinstance(keys, dict) else ():
                where = f"{device}/{task}/{key}"
                for backend in str(key).split("+"):
                    if not (root / str(device) / backend / DIFF_YAML).is_file():
                        bad(f"{where}: no folder {hardwares}/{device}/{backend}/ with a {DIFF_YAML}")
                if not isinstance(commits, list):
                    bad(f"{where}: must be a list of commit ids")
                    continue
                for commit in commits:
                    if isinstance(commit, str) and FULL_ID.fullmatch(commit):
                        listed.append((where, commit))
                    else:
                        bad(f"{where}: {str(commit)[:60]!r} is not a full 40-hex commit id")
            if not isinstance(keys, dict):
                bad(f"{device}/{task}: must map backends to commit lists")
        if not isinstance(tasks, dict):
            bad(f"{device}: must map tasks to backends")
    found = present(sorted({c for _, c in listed}))
    for where, commit in listed:
        if commit not in found:
            bad(f"{where}: commit {commit[:12]} is not in this repository",
                WARNING if allow_missing else ERROR)
    return out


def record(text: str, device: str, tasks: Iterable[str], backends: Iterable[str],
           commit: str) -> str:
    """`text` with `commit` appended for (device, each task) under the joined and single keys."""
    import yaml

    doc = load(text)
    names = sorted(set(backends))
    # the single keys in the order FlagScale's maintainers pass them (every entry of the real
    # file): the submodule backends, then FlagScale
    singles = [n for n in names if n != FLAGSCALE] + [n for n in names if n == FLAGSCALE]
    per_device = doc.setdefault(device, {})
    for task in tasks:
        per_task = per_device.setdefault(task, {})
        for key in ["+".join(names), *singles]:
            commits = per_task.setdefault(key, [])
            if commit not in commits:
                commits.append(commit)
    dumped: str = yaml.dump(doc, sort_keys=False)
    return dumped
