"""A check that examined nothing must not read as a check that passed.

Commands and hooks report a `nothing-checked` warning when they were handed files, or looked
for items, and checked none because they sit where the command was not told to look; the
message names what was seen and the one line of `.github/flagbot.yml` that makes it checked.
A warning keeps a clean run at 0; `--strict`, on by default under pre-commit, makes it exit 1.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence

from flagbot.hooks.errors import EXIT_CHECK_FAILED, EXIT_OK
from flagbot.hooks.findings import WARNING, Finding, has_errors

RULE = "nothing-checked"


def finding(path: str, message: str) -> Finding:
    """The `nothing-checked` warning for `path` (what was seen)."""
    return Finding(path, 0, WARNING, RULE, message)


def add_strict(parser: argparse.ArgumentParser) -> None:
    """`--strict` / `--no-strict`: whether a `nothing-checked` warning fails the run."""
    parser.add_argument("--strict", action=argparse.BooleanOptionalAction, default=None,
                        help="exit 1 when nothing was checked although files were given or "
                             "exist under another layout (default: on under pre-commit)")


def strict_mode(flag: bool | None, environ: Mapping[str, str] | None = None) -> bool:
    """`flag`, else whether pre-commit runs us (it exports PRE_COMMIT=1 to every hook).

    On by default for hooks rather than through `args:` in .pre-commit-hooks.yaml: a user's
    `args:` replaces the manifest's, so `args: [--root, ...]` would silently drop `--strict`
    exactly where a layout is being adjusted.
    """
    if flag is not None:
        return flag
    return bool((os.environ if environ is None else environ).get("PRE_COMMIT"))


def exit_status(findings: Sequence[Finding], *, strict: bool) -> int:
    """1 for errors, or under `strict` for a `nothing-checked` warning; else 0."""
    if has_errors(findings) or (strict and any(f.rule == RULE for f in findings)):
        return EXIT_CHECK_FAILED
    return EXIT_OK
