"""`flagbot patch`: write hardwares/<DEV>/<base8>/<base8>.patch for BASE..CUR, verified first.

The work is `hooks.patches.make.make_patch`; this module parses the flags of FlagScale's
original tools/patch/patch.py and reports.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from flagbot.hooks import git
from flagbot.hooks.folders import configured_folder
from flagbot.hooks.hookmain import parse_args
from flagbot.hooks.patches.make import PatchResult, make_patch


def report(result: PatchResult) -> str:
    """The user-facing summary: what was written and what to do next."""
    lines = []
    if result.squashed:
        lines.append(f"note: the range has merge commits; squashed into one mail with "
                     f"{result.cur[:12]}'s author and message")
    for rel in result.written:
        lines.append(f"wrote {rel}")
    for rel in result.unchanged:
        lines.append(f"unchanged {rel} (already identical)")
    lines.append(f"{result.mails} mail(s), {result.files} file diff(s); verified: "
                 f"{result.base[:8]} + patch = tree of {result.cur[:12]}")
    paths = " ".join(result.written + result.unchanged)
    lines.append(f"next: git add {paths} && git commit -m 'Add vendor patch' ; "
                 "then push and open a pull request")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    """The flags of FlagScale's original tools/patch/patch.py, exactly."""
    parser = argparse.ArgumentParser(prog="flagbot patch", description=__doc__.splitlines()[0])
    parser.add_argument("--device-type", nargs="+", required=True, metavar="DEV",
                        help="device(s), e.g. A_X100; several = heterogeneous, last is patched")
    parser.add_argument("--base-commit-id", required=True, metavar="BASE",
                        help="the upstream commit the vendor work starts from")
    parser.add_argument("--current-commit-id", default="HEAD", metavar="CUR",
                        help="the vendor commit to patch up to (default HEAD)")
    return parser


def main(argv: Sequence[str] | None = None, *, cwd: str | None = None) -> int:
    """Run `flagbot patch`."""
    args = parse_args(build_parser(), argv)
    repo = git.toplevel(Path(cwd or os.getcwd()))
    result = make_patch(repo, args.device_type, args.base_commit_id, args.current_commit_id)
    print(report(result))
    if git.resolve_commit(repo, "HEAD") == result.cur:
        note = uncommitted_note(uncommitted(repo, configured_folder(repo, "hardwares")))
        if note:
            print(note, file=sys.stderr)
    return 0


def uncommitted(repo: Path, hardwares: str) -> list[str]:
    """Changed and new files not committed, outside the patches folder: a patch is made of
    commits, so these are not in it."""
    changed = git.run(["diff", "--name-only", "-z", "HEAD", "--"], cwd=repo).stdout
    new = git.run(["ls-files", "--others", "--exclude-standard", "-z"], cwd=repo).stdout
    paths = (changed + new).decode("utf-8", "surrogateescape").split("\0")
    prefix = hardwares.rstrip("/") + "/"
    return sorted({p for p in paths if p and not p.startswith(prefix)})


def uncommitted_note(paths: list[str], shown: int = 5) -> str:
    """The warning for work left out of the patch, or "" when there is none."""
    if not paths:
        return ""
    more = f" and {len(paths) - shown} more" if len(paths) > shown else ""
    return (f"note: {len(paths)} uncommitted change(s) are not in the patch "
            f"({', '.join(paths[:shown])}{more}); commit them and run flagbot patch again "
            "to include them")


if __name__ == "__main__":
    raise SystemExit(main())
