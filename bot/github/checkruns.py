"""Check runs: find-then-update by (head sha, name), annotations in batches, replays are no-ops.

The result's digest rides in `external_id`, so a replay that would write the same check run sees
it already there and writes nothing. GitHub appends annotations on every update (check-runs API:
"annotations are appended"), so a run that already holds annotations is never reused for a new
result: a fresh run with the same name replaces it, as a re-run from the UI does.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from flagbot.bot.github import CheckRunRef, GitHubClient
from flagbot.hooks.findings import ERROR, WARNING, Finding

# "The Checks API limits the number of annotations to a maximum of 50 per API request."
MAX_ANNOTATIONS_PER_REQUEST = 50
# Annotations written per check run by default (Settings.max_annotations): a file with thousands
# of findings would otherwise take a paced write per 50 of them; the rest are counted in the
# summary and listed in the text.
MAX_ANNOTATIONS = 100
# output.summary and output.text are limited to 65535 characters each.
MAX_OUTPUT_CHARS = 65535
DIGEST_PREFIX = "flagbot1:"
PARTIAL = "flagbot1:partial"
LEVELS = {ERROR: "failure", WARNING: "warning"}


@dataclass
class CheckResult:
    """A check run's content: conclusion, title, markdown summary/text and its findings."""

    name: str
    conclusion: str
    title: str
    summary: str
    text: str = ""
    findings: list[Finding] = field(default_factory=list)
    # findings that were already there at the PR's merge base (listed, never annotated);
    # None when the base was not checked (the findings are then all of them)
    inherited: list[Finding] | None = None

    @property
    def failed(self) -> bool:
        return self.conclusion == "failure"

    @property
    def counts(self) -> str:
        """"N new, M existing" when the base was checked, else ""."""
        if self.inherited is None:
            return ""
        return f"{len(self.findings)} new, {len(self.inherited)} existing"


def annotation(f: Finding) -> dict[str, Any]:
    """A check-run annotation for one finding (line 0, the whole file, goes on line 1)."""
    line = max(f.line, 1)
    return {
        "path": f.path,
        "start_line": line,
        "end_line": line,
        "annotation_level": LEVELS.get(f.severity, "notice"),
        "title": f.rule,
        "message": f.message,
    }


def digest(result: CheckResult) -> str:
    """A stable id of everything the check run shows (the `external_id` of its final write)."""
    doc = {
        "c": result.conclusion, "t": result.title, "s": result.summary, "x": result.text,
        "a": [annotation(f) for f in sorted(result.findings)],
    }
    raw = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()
    return DIGEST_PREFIX + hashlib.sha256(raw).hexdigest()[:32]


def clip(text: str) -> str:
    """Cut `text` to GitHub's output limit, saying so."""
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    note = "\n\n… (truncated; run the command in the summary locally for everything)"
    return text[: MAX_OUTPUT_CHARS - len(note)] + note


def batches(items: Sequence[dict[str, Any]], size: int = MAX_ANNOTATIONS_PER_REQUEST) -> list[list[dict[str, Any]]]:
    """`items` in requests of at most `size` (always at least one, possibly empty)."""
    return [list(items[i : i + size]) for i in range(0, len(items), size)] or [[]]


def output(result: CheckResult, max_annotations: int = MAX_ANNOTATIONS
           ) -> tuple[dict[str, Any], list[list[dict[str, Any]]]]:
    """The check run's output (title, summary, text) and its annotations in request-sized
    batches: the first `max_annotations` findings, the summary counting the rest."""
    findings = sorted(result.findings)
    chunks = batches([annotation(f) for f in findings[:max(max_annotations, 0)]])
    summary = result.summary
    if len(findings) > max_annotations:
        summary += (f"\n\n{len(findings) - max_annotations} more finding(s) are not annotated "
                    f"(at most {max_annotations} per check run); the details list them all.")
    base: dict[str, Any] = {"title": result.title, "summary": clip(summary)}
    if result.text:
        base["text"] = clip(result.text)
    return base, chunks


def publish(client: GitHubClient, head_sha: str, result: CheckResult,
            max_annotations: int = MAX_ANNOTATIONS) -> str:
    """Write `result` as the check run `result.name` on `head_sha`, annotating its first
    `max_annotations` findings (the summary counts the rest); returns what was done."""
    ext = digest(result)
    runs = client.check_runs(head_sha, result.name)
    latest: CheckRunRef | None = max(runs, key=lambda r: r.id) if runs else None
    if latest is not None and latest.status == "completed" and latest.external_id == ext:
        return "unchanged"
    base, chunks = output(result, max_annotations)
    first = {
        "status": "completed",
        "conclusion": result.conclusion,
        "completed_at": datetime.now(timezone.utc),
        # the digest goes on the last write only: a run cut short mid-batches is never "done"
        "external_id": ext if len(chunks) == 1 else PARTIAL,
        "output": {**base, "annotations": chunks[0]},
    }
    reuse = latest is not None and latest.annotations_count == 0
    if reuse and latest is not None:
        run_id = latest.id
        client.update_check_run(run_id, first)
    else:
        run_id = client.create_check_run(head_sha, result.name, first)
    for i, chunk in enumerate(chunks[1:], start=2):
        fields: dict[str, Any] = {"output": {**base, "annotations": chunk}}
        if i == len(chunks):
            fields["external_id"] = ext
        client.update_check_run(run_id, fields)
    return "updated" if reuse else "created"


def complete(client: GitHubClient, run_id: int, result: CheckResult, external_id: str,
             max_annotations: int = MAX_ANNOTATIONS) -> None:
    """Complete the existing check run `run_id` with `result` and `external_id` (its first
    `max_annotations` findings annotated, in request-sized batches)."""
    base, chunks = output(result, max_annotations)
    client.update_check_run(run_id, {
        "status": "completed", "conclusion": result.conclusion,
        "completed_at": datetime.now(timezone.utc), "external_id": external_id,
        "output": {**base, "annotations": chunks[0]}})
    for chunk in chunks[1:]:
        client.update_check_run(run_id, {"output": {**base, "annotations": chunk}})
