"""`flagbot migrate`: bring old FlagScale-layout patches into the canonical form.

The work is `hooks.patches.migrate`; this module parses the flags and reports each outcome.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from flagbot.hooks import git
from flagbot.hooks.errors import EXIT_CHECK_FAILED, EXIT_OK, UsageError
from flagbot.hooks.folders import configured_folder
from flagbot.hooks.hookmain import parse_args, require_files
from flagbot.hooks.patches.migrate import Outcome, find_encrypted, find_old_patches, migrate_one


def render(outcome: Outcome) -> str:
    """One report line per patch, with notes indented below."""
    head = {"migrated": f"migrated {outcome.old} -> {outcome.new}",
            "unchanged": f"unchanged {outcome.old}",
            "error": f"error {outcome.old}"}[outcome.status]
    return "\n".join([head, *(f"  {n}" for n in outcome.notes)])


def build_parser() -> argparse.ArgumentParser:
    """Flags of `flagbot migrate`."""
    parser = argparse.ArgumentParser(prog="flagbot migrate", description=__doc__.splitlines()[0])
    parser.add_argument("patches", nargs="*", metavar="PATCH",
                        help="old patch files (default: hardware/ and hardwares/ */<hex>/<hex>.patch)")
    parser.add_argument("--dry-run", action="store_true", help="report only, write nothing")
    return parser


def main(argv: Sequence[str] | None = None, *, cwd: str | None = None) -> int:
    """Run `flagbot migrate`."""
    args = parse_args(build_parser(), argv)
    here = Path(cwd or os.getcwd())
    repo = git.toplevel(here)
    hardwares = configured_folder(repo, "hardwares")
    require_files(args.patches, here)
    rels = [Path(os.path.relpath((here / p).resolve(), repo.resolve())).as_posix()
            for p in args.patches] or find_old_patches(repo, hardwares)
    for rel in rels:
        if rel.startswith("../") or rel.count("/") != 3:
            raise UsageError(f"{rel}: not an old patch path <root>/<DEV>/<hex>/<hex>.patch")
    outcomes = [migrate_one(repo, rel, hardwares, dry_run=args.dry_run) for rel in rels]
    for outcome in outcomes:
        print(render(outcome))
    for rel in [] if args.patches else find_encrypted(repo, hardwares):
        print(f"skipped {rel}\n  encrypted: decrypt it with the vendor's key to a plain .patch "
              "beside it, then run flagbot migrate again")
    bad = [o for o in outcomes if not o.ok]
    print(f"migrate: {len(outcomes)} patch file(s), {len(bad)} need attention"
          + (" (dry run: nothing written)" if args.dry_run else ""))
    return EXIT_CHECK_FAILED if bad else EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
