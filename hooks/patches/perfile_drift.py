"""Drift and FlagScale's per-file folders: said apart, one line per folder, never as broken
seed-layout patches (a per-file patch is no mail series, and FlagScale applies it at the
commit its folder records, which `flagbot verify` checks)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from flagbot.hooks import git
from flagbot.hooks.patches.perfile import DIFF_YAML, folder_rel


def split_perfile(repo: Path, commit: str, hardwares: str,
                  rels: list[str]) -> tuple[list[str], Counter[str]]:
    """(the paths outside per-file folders of `commit`'s tree, patch files per such folder)."""
    listed = git.run(["ls-tree", "-r", "-z", "--name-only", commit, "--",
                      hardwares.rstrip("/") + "/"], cwd=repo).stdout
    folders = {name.rsplit("/", 1)[0] for raw in listed.split(b"\0") if raw
               for name in [raw.decode("utf-8", "surrogateescape")]
               if name.endswith("/" + DIFF_YAML) and folder_rel(name, hardwares) == name.rsplit("/", 1)[0]}
    counts: Counter[str] = Counter()
    rest = []
    for rel in rels:
        folder = folder_rel(rel, hardwares)
        if folder in folders:
            counts[folder] += 1
        else:
            rest.append(rel)
    return rest, counts


def skipped_lines(counts: Counter[str]) -> list[str]:
    """One line per per-file folder for the drift report."""
    return [f"{folder}/: FlagScale per-file folder ({n} patch file(s)), applied at the commit "
            "its diff.yaml records: `flagbot verify` checks it there" for folder, n in
            sorted(counts.items())]
