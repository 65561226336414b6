"""The finding type every checker reports, and its text / JSON renderings.

Checkers (backend, routing, hetero, verify) all return `list[Finding]`; the CLI prints them,
the bot turns them into check-run annotations. One type keeps those three consumers in step.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

ERROR = "error"
WARNING = "warning"
NOTE = "note"


@dataclass(frozen=True, order=True)
class Finding:
    """One problem at `path:line` (line 0 = the whole file); `rule` is a stable id."""

    path: str
    line: int
    severity: str
    rule: str
    message: str

    def render(self) -> str:
        return f"{self.path}:{self.line}: {self.severity}: [{self.rule}] {self.message}"


def has_errors(findings: Iterable[Finding]) -> bool:
    return any(f.severity == ERROR for f in findings)


def summary(findings: Sequence[Finding], what: str) -> str:
    errors = sum(f.severity == ERROR for f in findings)
    warnings = sum(f.severity == WARNING for f in findings)
    return f"{what}: {errors} error(s), {warnings} warning(s)"


def render_text(findings: Sequence[Finding], what: str, *,
                inherited: Sequence[Finding] | None = None, since: str = "") -> str:
    """One line per finding and a summary; with `inherited` (a `--since` run) `findings` are
    the new ones and the inherited ones are only counted."""
    lines = [f.render() for f in sorted(findings)]
    if inherited is None:
        lines.append(summary(findings, what))
    else:
        lines.append(summary(findings, what).replace(" error(s)", " new error(s)")
                     .replace(" warning(s)", " new warning(s)")
                     + f"; {len(inherited)} inherited from {since} not shown")
    return "\n".join(lines)


def render_json(findings: Sequence[Finding], what: str, *,
                inherited: Sequence[Finding] | None = None, **extra: object) -> str:
    """The findings document; with `inherited` (a `--since` run) every finding carries `new`,
    `errors`/`warnings` count the new ones and `inherited` counts the others."""
    rows = [asdict(f) for f in sorted(findings)]
    if inherited is not None:
        rows = [{**row, "new": True} for row in rows]
        rows += [{**asdict(f), "new": False} for f in sorted(inherited)]
        extra = {**extra, "inherited": len(inherited)}
    doc = {
        "schema": "flagbot.findings/1",
        "what": what,
        "errors": sum(f.severity == ERROR for f in findings),
        "warnings": sum(f.severity == WARNING for f in findings),
        "findings": rows,
        **extra,
    }
    return json.dumps(doc, indent=2, sort_keys=True)
