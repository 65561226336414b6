"""Where `verify` / `check-patches` / the bot's check meet FlagScale's per-file layout.

A stored patch inside a folder with a `diff.yaml` is a per-file patch and is checked by
perfile_verify.py; everything else under the patch folder keeps the seed layout's checks. In a
repository that uses the per-file layout, a patch in a backend-shaped folder that lost its
`diff.yaml` gets one error saying so, rather than the seed layout's complaints about names.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from flagbot.hooks.findings import ERROR, Finding
from flagbot.hooks.patches.perfile import (
    DIFF_YAML,
    find_folders,
    folder_rel,
    folders_for,
    in_perfile_folder,
    uses_perfile,
)
from flagbot.hooks.patches.perfile_history import check_history, history_rel
from flagbot.hooks.patches.perfile_verify import Options, present_commits, verify_folders


def split(repo: Path, hardwares: str, rels: Sequence[str]) -> tuple[list[str], list[str]]:
    """(seed-layout patches, per-file ones) among repository-relative patch paths."""
    seed: list[str] = []
    perfile: list[str] = []
    for rel in rels:
        (perfile if in_perfile_folder(repo, rel, hardwares) else seed).append(rel)
    return seed, perfile


def is_perfile_file(rel: str, hardwares: str) -> bool:
    """Whether a changed path is one the per-file checks read (a diff.yaml or the history)."""
    return rel == history_rel(hardwares) or (
        rel.endswith("/" + DIFF_YAML) and folder_rel(rel, hardwares) is not None
        and rel.count("/") == hardwares.strip("/").count("/") + 3)


def orphans(repo: Path, hardwares: str, seed: Sequence[str]) -> tuple[list[str], list[Finding]]:
    """Seed-layout candidates that are really per-file patches whose folder has no diff.yaml."""
    if not seed or not uses_perfile(repo, hardwares):
        return list(seed), []
    keep: list[str] = []
    found: list[Finding] = []
    depth = hardwares.strip("/").count("/") + 3
    for rel in seed:
        folder = folder_rel(rel, hardwares)
        name_parts = rel.split("/")
        seed_shaped = rel.count("/") == depth and name_parts[-1].split(".")[0] == name_parts[-2]
        if folder is None or seed_shaped:
            keep.append(rel)
            continue
        found.append(Finding(rel, 0, ERROR, "perfile-meta",
                             f"lies in {folder}/, which has no {DIFF_YAML}; FlagScale's unpatch "
                             "needs it (commit, backends_commit): add it, or move the patch"))
    return keep, found


def check(repo: Path, hardwares: str, files: Sequence[str] | None, opts: Options,
          *, apply: bool = True) -> tuple[int, list[Finding]]:
    """(per-file patch files covered, findings) for the given changed paths, or all (None)."""
    if files is None:
        folders = find_folders(repo, hardwares)
        history = True
    else:
        folders = folders_for(repo, hardwares, list(files))
        history = history_rel(hardwares) in files
    findings = verify_folders(repo, folders, opts, apply=apply)
    if history:
        findings += check_history(repo, hardwares, lambda ids: present_commits(repo, ids),
                                  allow_missing=opts.allow_missing_base or not apply)
    count = sum(len(f.plain) + len(f.encrypted) for f in folders)
    return count, findings


__all__ = ["check", "is_perfile_file", "orphans", "split"]
