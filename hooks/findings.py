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


def render_text(findings: Sequence[Finding], what: str) -> str:
    lines = [f.render() for f in sorted(findings)]
    lines.append(summary(findings, what))
    return "\n".join(lines)


def render_json(findings: Sequence[Finding], what: str, **extra: object) -> str:
    doc = {
        "schema": "flagbot.findings/1",
        "what": what,
        "errors": sum(f.severity == ERROR for f in findings),
        "warnings": sum(f.severity == WARNING for f in findings),
        "findings": [asdict(f) for f in sorted(findings)],
        **extra,
    }
    return json.dumps(doc, indent=2, sort_keys=True)
