"""The `check-hetero` hook: `hardwares/hetero.txt` is canonical and every listed patch exists.

A thin entry over `hooks.hetero.check_hetero` (the same check as `flagbot hetero check`); it
reads only the working tree, so it is fast enough for every commit.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from flagbot.hooks import git, hetero
from flagbot.hooks.findings import has_errors, render_json, render_text
from flagbot.hooks.hookmain import configured_folder, guarded

WHAT = "check-hetero"


def hardwares_of(repo: Path, given: str | None) -> str:
    """`given`, else `hardwares` from .github/flagbot.yml, else `hardwares`."""
    return configured_folder(repo, given, "hardwares")


def _run(argv: Sequence[str] | None, cwd: str | None) -> int:
    parser = argparse.ArgumentParser(prog="flagbot-check-hetero", description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="*", help="ignored (pre-commit passes the changed files)")
    parser.add_argument("--hardwares", help="the hardwares folder (default: from .github/flagbot.yml)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    args = parser.parse_args(argv)
    repo = git.toplevel(Path(cwd or os.getcwd()))
    findings = hetero.check_hetero(repo, hardwares_of(repo, args.hardwares))
    print(render_json(findings, WHAT) if args.format == "json" else render_text(findings, WHAT))
    return 1 if has_errors(findings) else 0


def main(argv: Sequence[str] | None = None, *, cwd: str | None = None) -> int:
    """Check hetero.txt; 0 ok, 1 findings, 2 usage or environment error."""
    return guarded(_run, argv, cwd, "flagbot-check-hetero")


if __name__ == "__main__":
    raise SystemExit(main())
