"""`flagbot check-patches` / the `check-patches` hook: stored vendor patches pass `verify`.

Two modes. Layout (commit time): names, folders, base-commit line and parseable mails, no
history needed. Full (pre-push, manual, the command line): also applies each patch at its
base and checks the byte round trip. As a hook the mode follows the pre-commit stage; `--layout-only`
and `--full` override it. In a shallow clone a base that is not present is a `base-unavailable`
warning naming what was not checked, instead of an error.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from flagbot.hooks import git, verify
from flagbot.hooks.check_hetero import hardwares_of
from flagbot.hooks.findings import Finding, has_errors, render_json, render_text
from flagbot.hooks.hookmain import guarded

WHAT = "check-patches"


def is_shallow(repo: Path) -> bool:
    """Whether the repository is a shallow clone (history, and maybe bases, are missing)."""
    return git.out(["rev-parse", "--is-shallow-repository"], cwd=repo) == "true"


# Stages where a commit is being made: history may be incomplete and speed matters.
LAYOUT_STAGES = frozenset({"pre-commit", "pre-merge-commit", "prepare-commit-msg", "commit-msg"})


def hook_stage(environ: dict[str, str] | None = None, parent_cmdline: bytes | None = None) -> str | None:
    """The pre-commit stage running this hook, or None outside pre-commit.

    pre-commit exports no stage variable; pre-push sets PRE_COMMIT_FROM_REF, and the stage is
    otherwise on the command line of pre-commit, our parent (`hook-impl --hook-type=X` from a
    git hook, `run --hook-stage X` by hand; `run` alone means pre-commit).
    """
    env = os.environ if environ is None else environ
    if not env.get("PRE_COMMIT"):
        return None
    if env.get("PRE_COMMIT_FROM_REF") or env.get("PRE_COMMIT_TO_REF"):
        return "pre-push"
    if parent_cmdline is None:
        try:
            parent_cmdline = Path(f"/proc/{os.getppid()}/cmdline").read_bytes()
        except OSError:
            return "pre-commit"
    args = [a.decode("utf-8", "replace") for a in parent_cmdline.split(b"\0")]
    for i, arg in enumerate(args):
        for flag in ("--hook-type", "--hook-stage"):
            if arg.startswith(flag + "="):
                return arg.split("=", 1)[1]
            if arg == flag and i + 1 < len(args):
                return args[i + 1]
    return "pre-commit"


def select_patches(repo: Path, hardwares: str, files: Sequence[str]) -> list[str]:
    """The given `.patch` files under the hardwares folder, or every stored patch if none given."""
    if not files:
        return verify.find_patches(repo, hardwares)
    prefix = hardwares.rstrip("/") + "/"
    return sorted({f for f in files if f.startswith(prefix) and f.endswith(".patch")
                   and (repo / f).is_file()})


def check_patches(repo: Path, files: Sequence[str] = (), *, hardwares: str = "hardwares",
                  layout_only: bool = False, allow_missing_base: bool | None = None) -> list[Finding]:
    """Findings for stored patches; `allow_missing_base` None means "if the clone is shallow"."""
    patches = select_patches(repo, hardwares, files)
    if layout_only:
        wanted = set(patches)
        return [f for f in verify.check_layout(repo, hardwares) if f.path in wanted]
    if allow_missing_base is None:
        allow_missing_base = is_shallow(repo)
    findings: list[Finding] = []
    for rel in patches:
        findings += verify.verify_patch(repo, rel, hardwares=hardwares,
                                        allow_missing_base=allow_missing_base)
    return findings


def _run(argv: Sequence[str] | None, cwd: str | None) -> int:
    parser = argparse.ArgumentParser(prog="flagbot check-patches", description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="*", help="patch files (default: every stored patch)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--layout-only", action="store_true",
                      help="names and contents only; no history needed (default at commit time)")
    mode.add_argument("--full", action="store_true",
                      help="apply at base and round trip (default at pre-push, manual, CLI)")
    parser.add_argument("--allow-missing-base", action="store_true", default=None,
                        help="a base not in the clone is a warning (default: only when shallow)")
    parser.add_argument("--hardwares", help="the hardwares folder (default: from .github/flagbot.yml)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    args = parser.parse_args(argv)
    repo = git.toplevel(Path(cwd or os.getcwd()))
    hardwares = hardwares_of(repo, args.hardwares)
    layout_only = args.layout_only or (not args.full and hook_stage() in LAYOUT_STAGES)
    findings = check_patches(repo, args.files, hardwares=hardwares, layout_only=layout_only,
                             allow_missing_base=args.allow_missing_base)
    skipped = sum(f.rule == "base-unavailable" for f in findings)
    if args.format == "json":
        print(render_json(findings, WHAT, unchecked=skipped))
        return 1 if has_errors(findings) else 0
    print(render_text(findings, f"{WHAT} ({'layout' if layout_only else 'full'})"))
    if skipped:
        print(f"{WHAT}: {skipped} patch(es) were checked for layout only: their base commit is "
              "not in this clone (shallow?); run `git fetch --unshallow` and check again",
              file=sys.stderr)
    return 1 if has_errors(findings) else 0


def main(argv: Sequence[str] | None = None, *, cwd: str | None = None) -> int:
    """Check stored patches; 0 ok (warnings allowed), 1 errors found, 2 usage."""
    return guarded(_run, argv, cwd, "flagbot check-patches")


if __name__ == "__main__":
    raise SystemExit(main())
