"""`flagbot migrate`: bring old FlagScale-layout patches into the canonical form.

The work is `hooks.patches.migrate` (the original tools' patches) and
`hooks.patches.perfile_migrate_cmd` (FlagScale's per-file folders, both directions); this
module parses the flags and reports each outcome.
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
from flagbot.hooks.patches import perfile_check, perfile_migrate_cmd
from flagbot.hooks.patches.migrate import Outcome, find_encrypted, find_old_patches, migrate_one
from flagbot.hooks.patches.perfile_migrate import Conversion


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
    perfile_migrate_cmd.add_options(parser)
    return parser


def main(argv: Sequence[str] | None = None, *, cwd: str | None = None) -> int:
    """Run `flagbot migrate`."""
    args = parse_args(build_parser(), argv)
    here = Path(cwd or os.getcwd())
    repo = git.toplevel(here)
    hardwares = configured_folder(repo, "hardwares")
    require_files(args.patches, here)
    given = [Path(os.path.relpath((here / p).resolve(), repo.resolve())).as_posix()
             for p in args.patches]
    if args.to_perfile:
        converted = perfile_migrate_cmd.run(repo, hardwares, given, args)
        return report(converted, [], args.dry_run)
    # FlagScale's per-file folders (a diff.yaml beside their patches): named, or all of them
    folder_args = [g for g in given if (repo / g).is_dir() or perfile_check.split(
        repo, hardwares, [g])[1] or perfile_check.is_perfile_file(g, hardwares)]
    given = [g for g in given if g not in folder_args]
    converted = perfile_migrate_cmd.run(
        repo, hardwares, [f"{g.rstrip('/')}/diff.yaml" if (repo / g).is_dir() else g
                          for g in folder_args], args) if folder_args or not given else []
    rels = given or ([] if folder_args else find_old_patches(repo, hardwares))
    for rel in rels:
        if rel.startswith("../") or rel.count("/") != 3:
            raise UsageError(f"{rel}: not an old patch path <root>/<DEV>/<hex>/<hex>.patch")
    outcomes = [migrate_one(repo, rel, hardwares, dry_run=args.dry_run) for rel in rels]
    for outcome in outcomes:
        print(render(outcome))
    for rel in [] if args.patches else perfile_check.split(
            repo, hardwares, find_encrypted(repo, hardwares))[0]:
        print(f"skipped {rel}\n  encrypted: decrypt it with the vendor's key to a plain .patch "
              "beside it, then run flagbot migrate again")
    return report(converted, outcomes, args.dry_run)


def report(converted: list[Conversion], outcomes: list[Outcome],
           dry_run: bool) -> int:
    """The closing line and the exit status (1 when something needs attention)."""
    bad = [o for o in outcomes if not o.ok] + [c for c in converted if c.status == "error"]
    skipped = sum(c.status == "skipped" for c in converted)
    print(f"migrate: {len(outcomes)} patch file(s), {len(converted)} per-file folder(s) or "
          f"patch(es) to convert ({skipped} not convertible), {len(bad)} need attention"
          + (" (dry run: nothing written)" if dry_run else ""))
    return EXIT_CHECK_FAILED if bad else EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
