"""The package as packaging lays it out: pyproject's `package-dir` mapping, read for tests."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # the dev extra brings tomli there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def setuptools_config(root: Path = ROOT) -> dict[str, object]:
    """`[tool.setuptools]` of `root`'s pyproject.toml."""
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    table: dict[str, object] = config["tool"]["setuptools"]
    return table


def package_dirs(root: Path = ROOT) -> dict[str, Path]:
    """Mapped import name -> folder ("flagbot.hooks" -> ROOT/hooks)."""
    mapping = setuptools_config(root)["package-dir"]
    assert isinstance(mapping, dict)
    return {str(name): root / str(folder) for name, folder in mapping.items()}


def module_files(root: Path = ROOT) -> dict[str, Path]:
    """Every flagbot module's import name -> its file."""
    files: dict[str, Path] = {}
    for package, folder in package_dirs(root).items():
        for path in folder.rglob("*.py"):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if "__pycache__" in parts:
                continue
            if parts[-1] == "__init__":
                parts.pop()
            files.setdefault(".".join([package, *parts]), path)
    return files


def package_names(root: Path = ROOT) -> set[str]:
    """Every import name of a folder holding an `__init__.py`, as the mapping places it."""
    return {name for name, path in module_files(root).items() if path.name == "__init__.py"}


def _git(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1",
               GIT_AUTHOR_NAME="flagbot tests", GIT_AUTHOR_EMAIL="tests@flagbot.invalid",
               GIT_COMMITTER_NAME="flagbot tests", GIT_COMMITTER_EMAIL="tests@flagbot.invalid")
    proc = subprocess.run(["git", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main",
                           *args], cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {proc.stderr.strip()}")
    return proc.stdout


def working_files(root: Path = ROOT) -> list[str]:
    """The checkout's files as the next commit would hold them (tracked or not, unignored)."""
    listed = _git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    return sorted({name for name in listed.split("\0") if name and os.path.lexists(root / name)})


def clone_without_links(dest: Path, root: Path = ROOT) -> tuple[Path, str]:
    """This checkout's working files committed in a fresh repository, then cloned from there
    with `core.symlinks=false` (Git for Windows' default: a link becomes a small text file).
    Returns (the clone, its commit)."""
    snapshot = dest / "snapshot"
    for name in working_files(root):
        source, target = root / name, snapshot / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():  # kept a link, so the clone shows what Windows would get
            os.symlink(os.readlink(source), target)
        else:
            shutil.copy2(source, target)
    _git(snapshot, "init", "-q")
    _git(snapshot, "add", "-A")
    _git(snapshot, "commit", "-q", "--no-verify", "-m", "snapshot")
    clone = dest / "clone"
    _git(dest, "-c", "core.symlinks=false", "clone", "-q", str(snapshot), str(clone))
    return clone, _git(clone, "rev-parse", "HEAD").strip()
