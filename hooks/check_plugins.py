"""`flagbot check-plugins` / the `check-plugins` hook: FlagOS plugin registries.

Checks vllm-plugin-FL and sglang-plugin-FL dispatch configs (`<pkg>/dispatch/config/*.yaml`)
against the implementations each backend registers, and Megatron-LM-FL's override registry
against the `@overridable` code and the platforms' device names. Static only: YAML and `ast`,
nothing of the plugin is imported. Rules: hooks/plugins/rules.py; guide: docs/hooks.md.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from flagbot.hooks import unchecked
from flagbot.hooks.findings import Finding, render_json, render_text
from flagbot.hooks.hookmain import guarded, parse_args
from flagbot.hooks.plugins.check import SOURCES, check_plugins

WHAT = "check-plugins"


def _run(argv: Sequence[str] | None, cwd: str | None) -> int:
    parser = argparse.ArgumentParser(prog="flagbot check-plugins",
                                     description=(__doc__ or "").split("\n")[0])
    parser.add_argument("paths", nargs="*", metavar="PATH", help="repository roots or registry "
                        "files (default: the current folder)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--since", metavar="REF", help="report only findings new since REF (a "
                        "commit, branch or tag); exit 1 only for new errors")
    unchecked.add_strict(parser)
    args = parse_args(parser, argv)
    base = Path(cwd or ".").resolve()
    paths = args.paths or ["."]

    def check(tree: Path) -> list[Finding]:
        # at REF, a path the change adds did not exist yet: there it is simply not checked
        present = [p for p in paths if (tree / p).exists()]
        return check_plugins(present, base=tree) if present else []

    findings, inherited = check_plugins(paths, base=base), None
    if args.since:
        from flagbot.hooks import since  # git: only when asked for

        # a registry check reads Python and YAML files only: REF's tree is written with those
        findings, inherited = since.judge(base, args.since, findings, check, paths=SOURCES)
    extra: dict[str, object] = {"checked": len(paths)}
    if inherited is not None:
        extra.update(since=args.since)
    if args.format == "json":  # with --since: each finding marks `new`, `inherited` counts
        print(render_json(findings, WHAT, inherited=inherited, **extra))
    else:
        print(render_text(findings, f"{WHAT}: {len(paths)} path(s)", inherited=inherited,
                          since=args.since or ""))
    return unchecked.exit_status(findings, strict=unchecked.strict_mode(args.strict))


def main(argv: Sequence[str] | None = None, *, cwd: str | None = None) -> int:
    """Check plugin registries; 0 clean (warnings allowed), 1 errors found, 2 usage."""
    return guarded(_run, argv, cwd, "flagbot check-plugins")


if __name__ == "__main__":
    raise SystemExit(main())
