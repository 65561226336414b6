"""`flagbot unpatch`: build DIR/<DEV>/<repo-name>/ = BASE with DEV's patch applied as commits.

The work is `hooks.patches.build.unpatch`; this module parses the flags of FlagScale's
original tools/patch/unpatch.py and reports.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from flagbot.hooks import git
from flagbot.hooks.hookmain import parse_args
from flagbot.hooks.patches.build import unpatch


def build_parser() -> argparse.ArgumentParser:
    """The flags of FlagScale's original tools/patch/unpatch.py, plus --force."""
    parser = argparse.ArgumentParser(prog="flagbot unpatch", description=__doc__.splitlines()[0])
    parser.add_argument("--device-type", nargs="+", required=True, metavar="DEV",
                        help="device(s); several = heterogeneous (all listed in hetero.txt)")
    parser.add_argument("--commit-id", required=True, metavar="BASE",
                        help="the base: at least 4 hex digits of a stored base commit")
    parser.add_argument("--dir", default="build", metavar="DIR",
                        help="build folder, relative to the repository top level (default build)")
    parser.add_argument("--force", action="store_true",
                        help="replace a previous build even if it has local changes")
    return parser


def main(argv: Sequence[str] | None = None, *, cwd: str | None = None) -> int:
    """Run `flagbot unpatch`."""
    args = parse_args(build_parser(), argv)
    repo = git.toplevel(Path(cwd or os.getcwd()))
    for build in unpatch(repo, args.device_type, args.commit_id, build_dir=args.dir,
                         force=args.force):
        rel = os.path.relpath(build.path, repo)
        print(f"built {rel}: {build.base[:12]} + {build.commits} vendor commit(s), "
              f"HEAD {build.tip[:12]} on branch {build.device}")
        if build.hand_edited:
            files = sorted({m.split(": ", 1)[0] for m in build.hand_edited})
            print(f"flagbot unpatch: warning: {build.device}'s stored patch was edited by hand: "
                  f"its index lines disagree with what it applies for {', '.join(files)}; built "
                  "as stored. `flagbot verify` reports it; `flagbot migrate` regenerates it "
                  "canonically (keeping the old file for review)", file=sys.stderr)
            for line in build.hand_edited:
                print(f"  {line}", file=sys.stderr)
    print("next: cd into the build folder and run or test the vendor code there")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
