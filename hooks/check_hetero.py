"""`flagbot hetero check` / the `check-hetero` hook: hetero.txt is canonical, every patch exists.

One check (`hooks.patches.hetero.check_hetero`) with two front doors: `hetero_main` is the
`flagbot hetero` subcommand (`--json`), `main` the console script pre-commit runs (file names
ignored, `--hardwares`, `--format`). It reads only the working tree, so it is fast enough for
every commit.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from flagbot.hooks import git, since
from flagbot.hooks.errors import EXIT_CHECK_FAILED, EXIT_OK
from flagbot.hooks.findings import NOTE, Finding, has_errors, render_json, render_text
from flagbot.hooks.folders import configured_folder, hetero_file
from flagbot.hooks.hookmain import guarded, parse_args
from flagbot.hooks.patches import hetero
from flagbot.hooks.patches.perfile import uses_perfile

WHAT = "check-hetero"


def run_check(cwd: str | None, hardwares: str | None, *, as_json: bool, what: str,
              since_ref: str | None = None) -> int:
    """Check the repository holding `cwd` and print the findings (only those new since
    `since_ref` when given); 0 clean, 1 errors."""
    repo = git.toplevel(Path(cwd or os.getcwd()))
    folder = configured_folder(repo, "hardwares", hardwares, option="--hardwares DIR")

    def check(tree: Path) -> list[Finding]:
        return hetero.check_hetero(tree, folder)

    findings, inherited = since.judge(repo, since_ref, check(repo), check)
    if not (repo / hetero_file(repo, folder)).is_file() and uses_perfile(repo, folder):
        # nothing to check is said, not passed silently; a note keeps pre-commit green
        findings.append(Finding(f"{folder}/{hetero.HETERO_NAME}", 0, NOTE, "hetero-perfile",
                                "absent, as in every FlagScale checkout of the per-file layout: "
                                "a heterogeneous setup there is its own device folder (like "
                                "NVIDIA_CambriconMLU), so nothing was checked"))
    extra = {"since": since_ref} if since_ref else {}
    print(render_json(findings, what, inherited=inherited, **extra) if as_json
          else render_text(findings, what, inherited=inherited, since=since_ref or ""))
    return EXIT_CHECK_FAILED if has_errors(findings) else EXIT_OK


def _run(argv: Sequence[str] | None, cwd: str | None) -> int:
    parser = argparse.ArgumentParser(prog="flagbot-check-hetero", description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="*", help="ignored (pre-commit passes the changed files)")
    parser.add_argument("--hardwares", help="the hardwares folder (default: from .github/flagbot.yml)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    since.add_option(parser)
    args = parser.parse_args(argv)
    return run_check(cwd, args.hardwares, as_json=args.format == "json", what=WHAT,
                     since_ref=args.since)


def main(argv: Sequence[str] | None = None, *, cwd: str | None = None) -> int:
    """Check hetero.txt (the hook); 0 ok, 1 findings, 2 usage or environment error."""
    return guarded(_run, argv, cwd, "flagbot-check-hetero")


def build_parser() -> argparse.ArgumentParser:
    """Flags of `flagbot hetero`."""
    parser = argparse.ArgumentParser(
        prog="flagbot hetero",
        description="`flagbot hetero check`: hetero.txt is canonical and every listed device "
                    "has its patch.")
    parser.add_argument("action", choices=["check"], help="check: validate hetero.txt")
    parser.add_argument("--json", action="store_true", help="print findings as JSON")
    since.add_option(parser)
    return parser


def hetero_main(argv: Sequence[str] | None = None, *, cwd: str | None = None) -> int:
    """Run `flagbot hetero check` (hooks/cli.py maps its errors onto the exit codes)."""
    args = parse_args(build_parser(), argv)
    return run_check(cwd, None, as_json=args.json, what="hetero check", since_ref=args.since)


if __name__ == "__main__":
    raise SystemExit(main())
