"""Which vendor folders to check: all under a root, those holding given paths, or staged ones."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from flagbot.hooks import git


def vendor_folders(root: Path) -> list[Path]:
    """Every `_<name>` folder directly under `root` (not `__pycache__` and other dunders)."""
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir()
                  if p.is_dir() and p.name.startswith("_") and not p.name.startswith("__"))


def folder_of(path: Path, root: Path) -> Path | None:
    """The vendor folder directly under `root` that contains `path` (or is it), else None."""
    try:
        rel = path.relative_to(root)
    except ValueError:
        return None
    if not rel.parts or not rel.parts[0].startswith("_") or rel.parts[0].startswith("__"):
        return None
    if len(rel.parts) == 1 and not (root / rel.parts[0]).is_dir():
        return None  # a file such as backend_utils.py beside the vendor folders
    return root / rel.parts[0]


def folders_for_paths(paths: Iterable[Path], root: Path) -> list[Path]:
    """Vendor folders holding `paths`; paths outside the root are ignored (pre-commit passes all)."""
    found = {folder_of(p, root) for p in paths}
    return sorted(f for f in found if f is not None and f.is_dir())


def staged_paths(repo: Path) -> list[Path]:
    """Files with staged changes (added, copied, modified, renamed) in the repository at `repo`."""
    top = git.toplevel(repo)  # UsageError (exit 2) outside a repository: pass PATH or --all
    proc = git.run(["diff", "--cached", "--name-only", "-z", "--diff-filter=ACMR"], cwd=top)
    return [top / name for name in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if name]
