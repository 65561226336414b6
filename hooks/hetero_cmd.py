"""`flagbot hetero check`: hetero.txt is canonical and every listed device has its patch."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from flagbot.hooks import git, hetero
from flagbot.hooks.devices import parse_args
from flagbot.hooks.errors import EXIT_CHECK_FAILED, EXIT_OK
from flagbot.hooks.findings import has_errors, render_json, render_text
from flagbot.hooks.patch_cmd import hardwares_dir


def build_parser() -> argparse.ArgumentParser:
    """Flags of `flagbot hetero`."""
    parser = argparse.ArgumentParser(prog="flagbot hetero", description=__doc__)
    parser.add_argument("action", choices=["check"], help="check: validate hetero.txt")
    parser.add_argument("--json", action="store_true", help="print findings as JSON")
    return parser


def main(argv: Sequence[str] | None = None, *, cwd: str | None = None) -> int:
    """Run `flagbot hetero check`."""
    args = parse_args(build_parser(), argv)
    repo = git.toplevel(Path(cwd or os.getcwd()))
    findings = hetero.check_hetero(repo, hardwares_dir(repo))
    what = "hetero check"
    print(render_json(findings, what) if args.json else render_text(findings, what))
    return EXIT_CHECK_FAILED if has_errors(findings) else EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
