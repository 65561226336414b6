"""The downstream label log: each PR the bot labels, with the paths behind each label, and
whether it was merged or closed. `GET /feeds/<label>.atom` and `flagbot labeled` read it.

Labels are recorded after the pull_request flow put them on the PR; a `closed` delivery marks the
PR merged (refreshing the paths from the final file list) or closed. A label the PR no longer
carries when it closes, or whose paths left it, drops out of the listings.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from flagbot.bot.context import Context, field_of
from flagbot.bot.github.labels import LabelChange
from flagbot.bot.handlers import labels
from flagbot.bot.store.feed import Closing, LabeledPR


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


def closed(ctx: Context) -> dict[str, Any]:
    """A `closed` delivery: the PR's entries become merged (with the merge commit) or closed."""
    pr = field_of(ctx.payload, "pull_request")
    merged = bool(pr.get("merged"))
    at = epoch(pr.get("merged_at") if merged else pr.get("closed_at")) or time.time()
    carried = [str(lab.get("name")) for lab in pr.get("labels") or [] if isinstance(lab, dict)]
    refreshed: list[str] = []
    if ctx.label_log is None or ctx.dry_run:
        return {"closed": "merged" if merged else "closed", "feed_labels": []}
    if merged and ctx.config is not None:
        # The final file list decides which labels the merged change earned and for which paths.
        files = ctx.client.pull_files(int(field_of(pr, "number")))
        wanted = labels.plan_labels(ctx.config, labels.touched_paths(files))
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
    return {"closed": "merged" if merged else "closed", "feed_labels": carried}
