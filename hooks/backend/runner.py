"""Checking many vendor folders at once: worker processes, and the context read meanwhile.

Kept apart from the rules on purpose: this module only decides where each piece of
`hooks/backend/check.py` runs. The tune files (YAML, the largest share of the work) need no
FlagGems context, so workers start on them while this process reads the context (the other
large share); the remaining rules follow, one task per vendor, largest first.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from flagbot.hooks.backend.check import check_rules, check_tunes, check_vendor
from flagbot.hooks.backend.context import FlagGemsContext
from flagbot.hooks.backend.pysrc import Sources
from flagbot.hooks.findings import Finding

if TYPE_CHECKING:
    from concurrent.futures import Future

ContextLoader = Callable[[], FlagGemsContext | None]


def run_serial(repo: Path, folders: list[Path], load: ContextLoader) -> list[Finding]:
    """Every vendor in this process, one shared source cache."""
    ctx = load()
    sources = Sources()
    return sorted(f for folder in folders for f in check_vendor(repo, folder, sources, ctx))


def _weight(folder: Path) -> int:
    """Bytes of the folder's files: what checking it costs, near enough to order the work."""
    total = 0
    for directory, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.stat(os.path.join(directory, name)).st_size
            except OSError:
                pass
    return total


def _tunes(repo: Path, folder: Path) -> tuple[list[Finding], dict[str, int]]:
    return check_tunes(repo, folder, Sources())


def _rules(repo: Path, folder: Path, ctx: FlagGemsContext | None, keys: dict[str, int]) -> list[Finding]:
    return check_rules(repo, folder, Sources(), ctx, keys)


def run_parallel(repo: Path, folders: list[Path], load: ContextLoader, jobs: int) -> list[Finding]:
    """The same findings as run_serial, from `jobs` forked workers (fork only: POSIX)."""
    # imported here: the one-folder pre-commit run never starts workers and skips their cost
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    order = sorted(folders, key=_weight, reverse=True)  # largest first: the last tasks are short
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
        tunes = {folder: pool.submit(_tunes, repo, folder) for folder in order}
        ctx = load()  # overlaps the tune files in the workers
        rules: list[Future[list[Finding]]] = []
        found: list[Finding] = []
        for folder in order:
            tune_findings, keys = tunes[folder].result()
            found += tune_findings
            rules.append(pool.submit(_rules, repo, folder, ctx, keys))
        for future in rules:
            found += future.result()
    return sorted(found)


def can_fork() -> bool:
    """Whether worker processes can be forked here (they share the parent's imports)."""
    return hasattr(os, "fork")
