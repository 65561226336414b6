"""`flagbot verify [PATCH ...]`: re-check stored patches (apply at base, round trip, bytes)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from flagbot.hooks import git, verify
from flagbot.hooks.devices import parse_args
from flagbot.hooks.errors import EXIT_CHECK_FAILED, EXIT_OK, UsageError
from flagbot.hooks.findings import Finding, has_errors, render_json, render_text
from flagbot.hooks.patch_cmd import hardwares_dir


def build_parser() -> argparse.ArgumentParser:
    """Flags of `flagbot verify`."""
    parser = argparse.ArgumentParser(prog="flagbot verify", description=__doc__)
    parser.add_argument("patches", nargs="*", metavar="PATCH",
                        help="patch files (default: every hardwares/**/*.patch)")
    parser.add_argument("--allow-missing-base", action="store_true",
                        help="a base commit missing from history (shallow clone) is a warning")
    parser.add_argument("--json", action="store_true", help="print findings as JSON")
    return parser


def repo_relative(repo: Path, here: Path, given: str) -> str:
    """A PATCH argument (relative to the current directory) as a repository-relative path."""
    path = (here / given).resolve()
    try:
        return path.relative_to(repo.resolve()).as_posix()
    except ValueError:
        raise UsageError(f"{given}: not inside the repository {repo}") from None


def main(argv: Sequence[str] | None = None, *, cwd: str | None = None) -> int:
    """Run `flagbot verify`."""
    args = parse_args(build_parser(), argv)
    here = Path(cwd or os.getcwd())
    repo = git.toplevel(here)
    hardwares = hardwares_dir(repo)
    rels = [repo_relative(repo, here, p) for p in args.patches] or verify.find_patches(
        repo, hardwares)
    findings: list[Finding] = []
    for rel in rels:
        findings += verify.verify_patch(repo, rel, hardwares=hardwares,
                                        allow_missing_base=args.allow_missing_base)
    what = f"verify ({len(rels)} patch file(s))"
    print(render_json(findings, what) if args.json else render_text(findings, what))
    return EXIT_CHECK_FAILED if has_errors(findings) else EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
