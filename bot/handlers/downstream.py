"""The downstream label log: each PR the bot labels, with the paths behind each label, and
whether it was merged or closed. `GET /feeds/<label>.atom` and `flagbot labeled` read it.

Labels are recorded after the pull_request flow put them on the PR; a `closed` delivery marks the
PR merged (refreshing the paths from the final file list) or closed. A label configured
`when: merged` is put on the PR by the merge delivery, only when every flagbot check run of the
merged head passed, and enters the feed only then. A label the PR no longer
carries when it closes, or whose paths left it, drops out of the listings.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from flagbot.bot.context import Context, field_of
from flagbot.bot.feed.log import Closing, LabeledPR
from flagbot.bot.github.labels import LabelChange, add_wanted
from flagbot.bot.handlers import labels
from flagbot.bot.handlers.judging import JUDGED_CHECKS

# what counts as passed for `when: merged` labels (neutral: the check had nothing to judge)
PASSED = ("success", "neutral", "skipped")


def epoch(stamp: object) -> float | None:
    """GitHub's `2026-01-31T12:00:00Z` as seconds since the epoch (None when absent)."""
    if not isinstance(stamp, str) or not stamp:
        return None
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def entry(ctx: Context, name: str, wanted: labels.WantedLabel, at: float) -> LabeledPR:
    pr = field_of(ctx.payload, "pull_request")
    return LabeledPR(ctx.full_name, int(field_of(pr, "number")), name, str(pr.get("title") or ""),
                     str(pr.get("html_url") or ""), tuple(wanted.files), "open", at)


def record_labels(ctx: Context, wanted: dict[str, labels.WantedLabel],
                  change: LabelChange) -> list[str]:
    """Record the labels the PR now carries for the bot's reasons; returns their names."""
    log = ctx.label_log
    if log is None or ctx.dry_run:
        return []
    now = time.time()
    for name, w in wanted.items():
        log.labeled(entry(ctx, name, w, now))
    number = int(field_of(ctx.payload, "pull_request", "number"))
    for name in change.to_remove:
        log.unlabeled(ctx.full_name, number, name, now)
    return list(wanted)


def checks_passed(ctx: Context, head_sha: str) -> bool:
    """Whether the flagbot check runs that judged `head_sha` exist and none failed."""
    runs = [run for name in JUDGED_CHECKS for run in ctx.client.check_runs(head_sha, name)]
    latest: dict[str, Any] = {}
    for run in runs:
        if run.name not in latest or run.id > latest[run.name].id:
            latest[run.name] = run
    return bool(latest) and all(r.status == "completed" and r.conclusion in PASSED
                                for r in latest.values())


def label_at_merge(ctx: Context, wanted: dict[str, labels.WantedLabel],
                   carried: list[str]) -> list[str]:
    """Put the `when: merged` labels the merged change earned on it, if its flagbot checks
    passed; returns the names added."""
    pr = field_of(ctx.payload, "pull_request")
    _, later = labels.split_by_when(wanted)
    have = {name.lower() for name in carried}
    later = {n: w for n, w in later.items() if n.lower() not in have}
    if not later or ctx.dry_run or not checks_passed(ctx, str(field_of(pr, "head", "sha"))):
        return []
    change = labels.plan_change(later, carried, [], ctx.client.repo_labels())
    add_wanted(ctx.client, int(field_of(pr, "number")), change)
    return list(change.to_add)


def closed(ctx: Context) -> dict[str, Any]:
    """A `closed` delivery: `when: merged` labels go on a merged PR whose checks passed; the
    PR's feed entries become merged (with the merge commit) or closed."""
    pr = field_of(ctx.payload, "pull_request")
    merged = bool(pr.get("merged"))
    at = epoch(pr.get("merged_at") if merged else pr.get("closed_at")) or time.time()
    carried = [str(lab.get("name")) for lab in pr.get("labels") or [] if isinstance(lab, dict)]
    refreshed: list[str] = []
    wanted: dict[str, labels.WantedLabel] = {}
    added: list[str] = []
    if merged and ctx.config is not None:
        # The final file list decides which labels the merged change earned and for which paths.
        files = ctx.client.pull_files(int(field_of(pr, "number")))
        wanted = labels.plan_labels(ctx.config, labels.touched_paths(files))
        added = label_at_merge(ctx, wanted, carried)
        carried += added
    if ctx.label_log is None or ctx.dry_run:
        return {"closed": "merged" if merged else "closed", "feed_labels": [],
                "labels_added": added}
    if merged and ctx.config is not None:
        have = {name.lower() for name in carried}
        for name, w in wanted.items():
            if name.lower() in have:
                ctx.label_log.labeled(entry(ctx, name, w, at))
                refreshed.append(name)
        carried = refreshed
    ctx.label_log.closed(Closing(ctx.full_name, int(field_of(pr, "number")),
                                 str(pr.get("title") or ""), str(pr.get("html_url") or ""),
                                 merged, at, pr.get("merge_commit_sha") if merged else None,
                                 tuple(carried)))
    return {"closed": "merged" if merged else "closed", "feed_labels": carried,
            "labels_added": added}
