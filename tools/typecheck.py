#!/usr/bin/env python3
"""Strict mypy on the `flagbot` package as it installs: `python tools/typecheck.py [MYPY ARGS]`.

The checkout cannot resolve `flagbot.hooks` (the folders are mapped by `package-dir` in
pyproject.toml, which mypy does not read, and an editable install resolves them through an
import hook mypy cannot follow). This lays the package out the way the wheel does, by that same
mapping, under build/typecheck/, runs mypy there with the project's configuration, and prints
its messages with the checkout's paths. Without arguments it checks every package
(`[tool.mypy] packages`); the exit code is mypy's.
"""

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
TREE = ROOT / "build" / "typecheck"


def package_dirs() -> dict[str, Path]:
    """Top-level mapped packages ("flagbot.hooks" -> ROOT/hooks), from pyproject.toml."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    mapping: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    return {name: ROOT / folder for name, folder in mapping.items()}


def lay_out() -> dict[Path, Path]:
    """Copy each mapped folder's sources to its import path under TREE; {copy: source}."""
    shutil.rmtree(TREE / "flagbot", ignore_errors=True)
    back: dict[Path, Path] = {}
    # parents first, so a child's copy lands inside its parent's folder
    for name, source in sorted(package_dirs().items(), key=lambda item: item[0].count(".")):
        dest = TREE.joinpath(*name.split("."))
        dest.mkdir(parents=True, exist_ok=True)
        for path in source.rglob("*.py"):
            relative = path.relative_to(source)
            if "__pycache__" in relative.parts:
                continue
            target = dest / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)  # mtimes kept: mypy's cache stays valid across runs
            back[target] = path
        back[dest] = source
    return back


def main(argv: list[str]) -> int:
    back = lay_out()
    env = {k: v for k, v in os.environ.items() if k not in ("MYPYPATH", "PYTHONPATH")}
    proc = subprocess.run([sys.executable, "-m", "mypy", "--config-file",
                           str(ROOT / "pyproject.toml"), "--cache-dir",
                           str(ROOT / ".mypy_cache"), *argv],
                          cwd=TREE, env=env, capture_output=True, text=True, check=False)
    # longest first: a file's copy is replaced before the folder holding it
    replacements = sorted(((str(k.relative_to(TREE)), str(v.relative_to(ROOT)))
                           for k, v in back.items()), key=lambda kv: -len(kv[0]))
    for stream, out in ((proc.stdout, sys.stdout), (proc.stderr, sys.stderr)):
        for line in stream.splitlines(keepends=True):
            for copy, source in replacements:
                if line.startswith(copy):
                    line = source + line[len(copy):]
                    break
            out.write(line)
    return proc.returncode


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
