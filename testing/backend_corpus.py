"""Builds backends from `testing/resources/backends/` for tests: clean copies and rule overlays.

A broken case is `broken/<rule>/case.yaml` (base clean vendor, optional folder name, whether it
sits inside the tiny FlagGems tree, files to delete) plus `files/` laid over the clean copy;
`flaggems_files/` and `flaggems_delete` change the FlagGems tree (an older layout, say).
A form case (`forms/<name>/`) has the same layout and reproduces a form met in real vendor
trees; its case.yaml adds `expect` (rule -> severity that must be reported) and `absent`
(rules that must not be), and an optional `flaggems_files/` overlay on the FlagGems tree.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import yaml

CORPUS = Path(__file__).resolve().parent / "resources" / "backends"
CLEAN = CORPUS / "clean"
BROKEN = CORPUS / "broken"
FORMS = CORPUS / "forms"
FLAGGEMS = CORPUS / "flaggems"
FLAGGEMS_ROOT = "src/flag_gems/runtime/backend"


def broken_rules() -> list[str]:
    """Every rule id that has a broken backend."""
    return sorted(p.name for p in BROKEN.iterdir() if (p / "case.yaml").is_file())


def form_cases() -> list[str]:
    """Every real-form regression case."""
    return sorted(p.name for p in FORMS.iterdir() if (p / "case.yaml").is_file())


def read_case(case_dir: Path) -> dict[str, Any]:
    """The parsed case.yaml of a broken or form case."""
    loaded = yaml.safe_load((case_dir / "case.yaml").read_text(encoding="utf-8"))
    return loaded if isinstance(loaded, dict) else {}


def _build(case_dir: Path, dest: Path) -> tuple[str, str]:
    case = read_case(case_dir)
    if case.get("context"):
        shutil.copytree(FLAGGEMS, dest, dirs_exist_ok=True)
        root = FLAGGEMS_ROOT
    else:
        root = "backends"
    if (case_dir / "flaggems_files").is_dir():
        shutil.copytree(case_dir / "flaggems_files", dest, dirs_exist_ok=True)
    for rel in case.get("flaggems_delete", []):
        (dest / rel).unlink()
    folder = dest / root / case.get("name", case["base"])
    shutil.copytree(CLEAN / case["base"], folder)
    for rel in case.get("delete", []):
        (folder / rel).unlink()
    files = case_dir / "files"
    if files.is_dir():
        shutil.copytree(files, folder, dirs_exist_ok=True)
    for rel, size in case.get("grow", {}).items():  # comment lines up to `size` bytes
        path = folder / rel
        with path.open("a", encoding="utf-8") as fh:
            fh.write("# padding\n" * (max(int(size) - path.stat().st_size, 0) // 10 + 1))
    return root, folder.relative_to(dest).as_posix()


def build_case(rule: str, dest: Path) -> tuple[str, str]:
    """Build the broken backend for `rule` under `dest`; return (root, vendor folder), repo-relative."""
    return _build(BROKEN / rule, dest)


def build_form(name: str, dest: Path) -> tuple[str, str]:
    """Build the real-form case `name` under `dest`; return (root, vendor folder), repo-relative."""
    return _build(FORMS / name, dest)


def build_clean(dest: Path, *, context: bool = False) -> str:
    """Copy both clean vendors under `dest` (inside the FlagGems tree if `context`); the root."""
    root = FLAGGEMS_ROOT if context else "backends"
    if context:
        shutil.copytree(FLAGGEMS, dest, dirs_exist_ok=True)
    shutil.copytree(CLEAN, dest / root, dirs_exist_ok=True)
    return root
