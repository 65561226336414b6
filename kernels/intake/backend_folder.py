"""`kernels import-backend SRC`: copy a FlagGems-layout backend folder into backends/, then load it.

Never overwrites: an existing destination is an error naming the next step (remove or rename
it yourself), because a vendor's local edits there would otherwise be lost.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from flagbot.kernels.flaggems_layout import missing_files
from flagbot.kernels.loader import BackendLoadError, BackendMissing, load_backend


def import_backend(source: Path, dest_root: Path) -> int:
    """Copy `source` (a _<vendor> folder) to `dest_root/<name>`; 0 ok, 1 broken, 2 usage."""
    if not source.is_dir() or not source.name.startswith("_"):
        print(f"flagbot kernels import-backend: {source}: not a _<vendor> folder; pass e.g. "
              "src/flag_gems/runtime/backend/_myvendor", file=sys.stderr)
        return 2
    missing = missing_files(source)
    if missing:
        print(f"flagbot kernels import-backend: {source}: missing {', '.join(missing)} (FlagGems "
              "layout; copy backends/_template for the smallest complete backend)",
              file=sys.stderr)
        return 2
    target = dest_root / source.name
    if target.exists():
        print(f"flagbot kernels import-backend: {target} exists; nothing copied. Remove or rename it "
              "first if you mean to replace it", file=sys.stderr)
        return 2
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    try:
        backend = load_backend(target)
    except (BackendMissing, BackendLoadError) as exc:
        print(f"flagbot kernels import-backend: copied to {target}, but it does not load: {exc}",
              file=sys.stderr)
        return 1
    names = ", ".join(f"{op.name} ({op.kind})" for op in backend.ops) or "none"
    print(f"imported {source} -> {target}: ops {names}\n"
          f"next: flagbot kernels check --backend {target}")
    return 1 if any(op.error for op in backend.ops) else 0
