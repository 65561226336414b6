"""The sticky summary comment: one per PR, found by a hidden marker, edited in place.

The marker also carries metadata (which labels the bot added), so state lives on GitHub and any
worker on any host sees the same (bedevere and Prow keep state in their comments the same way).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from flagbot.bot.github import Comment
from flagbot.bot.github.checkruns import CheckResult
from flagbot.bot.github.markdown import code, plain, unmarked

MARKER = "<!-- flagbot:summary"
KERNELS_BEGIN = "<!-- flagbot:kernels -->"
KERNELS_END = "<!-- /flagbot:kernels -->"
META_RE = re.compile(r"<!-- flagbot:summary (\{.*?\}) -->")
ICONS = {"success": "✅", "failure": "❌", "neutral": "➖"}


@dataclass
class Summary:
    """What the comment reports for one head."""

    head_sha: str
    label_lines: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    checks: list[CheckResult] = field(default_factory=list)
    config_problems: list[str] = field(default_factory=list)
    default_branch: str = "main"
    patch_lines: list[str] = field(default_factory=list)  # patch regeneration, when labelled
    kernel_lines: list[str] = field(default_factory=list)  # kernel checks per device


def find(comments: Iterable[Comment], bot_login: str) -> Comment | None:
    """The bot's own comment carrying the marker (the oldest, should a race have made two)."""
    mine = [c for c in comments if c.author == bot_login and MARKER in c.body]
    return min(mine, key=lambda c: c.id) if mine else None


def metadata(comment: Comment | None) -> dict[str, Any]:
    """The JSON kept in the marker ({} when absent or unreadable)."""
    if comment is None:
        return {}
    match = META_RE.fullmatch(comment.body.partition("\n")[0])  # the bot's own first line only
    try:
        meta = json.loads(match.group(1)) if match else {}
    except ValueError:
        return {}
    return meta if isinstance(meta, dict) else {}


def bot_labels(comment: Comment | None) -> list[str]:
    """Labels the bot recorded as added by itself."""
    labels = metadata(comment).get("bot_labels", [])
    return [str(x) for x in labels] if isinstance(labels, list) else []


def marker(meta: dict[str, Any]) -> str:
    """The hidden first line; `--` is escaped so label names cannot end the HTML comment."""
    raw = json.dumps(meta, sort_keys=True, separators=(",", ":")).replace("--", "-\\u002d")
    return f"{MARKER} {raw} -->"


def render(summary: Summary, meta: dict[str, Any]) -> str:
    """The whole comment body."""
    lines = [marker(meta), f"### flagbot summary for {summary.head_sha[:10]}", ""]
    if summary.config_problems:
        lines += [f"**`.github/flagbot.yml` on `{summary.default_branch}` has errors**, so "
                  "flagbot checked nothing and changed no labels:", ""]
        lines += [f"- {plain(p)}" for p in summary.config_problems]
        lines += ["", "**Next steps**: fix the file on the default branch (try it first with "
                  "`flagbot replay PAYLOAD.json --event pull_request --repo . --dry-run`), "
                  "then push to this pull request to re-run the checks."]
        return "\n".join(lines) + "\n"
    lines.append("**Labels**")
    lines += summary.label_lines or ["- none: this pull request touches no PrivateUse1 or vendor paths"]
    if summary.removed:
        lines.append("- removed " + ", ".join(code(n) for n in summary.removed)
                     + ": their paths are no longer in this pull request")
    if summary.patch_lines:
        lines += ["", "**Patch regeneration**", *summary.patch_lines]
    lines += ["", "**Checks**", "", "| check | result |", "| --- | --- |"]
    lines += [f"| {c.name} | {ICONS.get(c.conclusion, '')} {unmarked(c.title)}"
              f"{f' ({c.counts})' if c.counts else ''} |" for c in summary.checks]
    lines += ["", *kernels_block(summary.kernel_lines)]
    lines += ["", "**Next steps**"]
    lines += next_steps(summary.checks)
    return "\n".join(lines) + "\n"


def kernels_block(lines: Sequence[str]) -> list[str]:
    """The kernel-check section between its markers (the markers alone when there is none)."""
    body = ["**Kernel checks**", "", *lines] if lines else []
    return [KERNELS_BEGIN, *body, KERNELS_END]


def with_kernels(body: str, lines: Sequence[str]) -> str:
    """`body` with its kernel-check section replaced by `lines` (added before the next steps
    when the comment predates the section)."""
    block = "\n".join(kernels_block(lines))
    # the bot writes its markers as whole lines; text from a PR never stands alone on one
    start, end = line_at(body, KERNELS_BEGIN), line_at(body, KERNELS_END)
    if start != -1 and end > start:
        return body[:start] + block + body[end + len(KERNELS_END):]
    steps = body.find("\n**Next steps**")
    if steps == -1:
        return body.rstrip("\n") + "\n\n" + block + "\n"
    return body[:steps] + "\n" + block + "\n" + body[steps:]


def line_at(body: str, line: str) -> int:
    """Where `line` stands alone on a line of `body` (-1 when it does not)."""
    found = re.search(rf"(?m)^{re.escape(line)}$", body)
    return found.start() if found else -1


def with_meta(body: str, meta: dict[str, Any]) -> str:
    """`body` with its hidden marker line carrying `meta`."""
    first, _, rest = body.partition("\n")
    return marker(meta) + "\n" + (rest if MARKER in first else body)


def next_steps(checks: Sequence[CheckResult]) -> list[str]:
    """What the author should do now, from the failed checks."""
    failed = [c for c in checks if c.failed]
    if not failed:
        return ["- nothing to do from flagbot's side; reviewers take it from here"]
    return [f"- **{c.name}**: open the check run for the annotated lines; {reproduce_line(c)}"
            if reproduce_line(c) else f"- **{c.name}**: see the check run"
            for c in failed] + ["- push a fix; flagbot re-checks every new head"]


def reproduce_line(check: CheckResult) -> str:
    """The check's "Reproduce locally: ..." line, or ""."""
    return next((line for line in check.summary.splitlines()
                 if line.startswith("Reproduce locally")), "")

