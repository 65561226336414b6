"""Builds backends from `testing/resources/backends/` for tests: clean copies and rule overlays.

A broken case is `broken/<rule>/case.yaml` (base clean vendor, optional folder name, whether it
sits inside the tiny FlagGems tree, files to delete) plus `files/` laid over the clean copy.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

CORPUS = Path(__file__).resolve().parent / "resources" / "backends"
CLEAN = CORPUS / "clean"
BROKEN = CORPUS / "broken"
FLAGGEMS = CORPUS / "flaggems"
FLAGGEMS_ROOT = "src/flag_gems/runtime/backend"


def broken_rules() -> list[str]:
    """Every rule id that has a broken backend."""
    return sorted(p.name for p in BROKEN.iterdir() if (p / "case.yaml").is_file())


def build_case(rule: str, dest: Path) -> tuple[str, str]:
    """Build the broken backend for `rule` under `dest`; return (root, vendor folder), repo-relative."""
    case = yaml.safe_load((BROKEN / rule / "case.yaml").read_text(encoding="utf-8"))
    if case.get("context"):
        shutil.copytree(FLAGGEMS, dest, dirs_exist_ok=True)
        root = FLAGGEMS_ROOT
    else:
        root = "backends"
    folder = dest / root / case.get("name", case["base"])
    shutil.copytree(CLEAN / case["base"], folder)
    for rel in case.get("delete", []):
        (folder / rel).unlink()
    files = BROKEN / rule / "files"
    if files.is_dir():
        shutil.copytree(files, folder, dirs_exist_ok=True)
    return root, folder.relative_to(dest).as_posix()


def build_clean(dest: Path, *, context: bool = False) -> str:
    """Copy both clean vendors under `dest` (inside the FlagGems tree if `context`); the root."""
    root = FLAGGEMS_ROOT if context else "backends"
    if context:
        shutil.copytree(FLAGGEMS, dest, dirs_exist_ok=True)
    shutil.copytree(CLEAN, dest / root, dirs_exist_ok=True)
    return root
