"""The label log behind the downstream feed: every PR the bot labels, and what became of it.

One entry per (repository, PR, label): the PR's title and link, the changed paths that earned the
label (for `module: PrivateUse1`, those matching its globs), and its state: `open`, then `merged`
(with the merge commit and time) or `closed`. An entry whose label the PR lost (its paths left, or
a person removed the label before the merge) keeps `unlabeled_at` and leaves every listing. Label
names match case-insensitively, as on GitHub.

Two implementations, picked like the ledger (`store/factory.py`): `feed/log_sqlite.py`
(`<state dir>/feed.db`) and `feed/log_redis.py` (with `FLAGBOT_REDIS_URL`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

STATES = ("open", "merged", "closed")
# what a listing asks for: one state, or every entry still carrying its label
SELECTIONS = (*STATES, "all")


@dataclass(frozen=True)
class LabeledPR:
    """One PR under one label."""

    repo: str
    number: int
    label: str
    title: str
    url: str
    paths: tuple[str, ...] = ()
    state: str = "open"
    labeled_at: float = 0.0
    merged_at: float | None = None
    closed_at: float | None = None
    merge_commit: str | None = None
    unlabeled_at: float | None = None

    def sort_time(self) -> float:
        """When it last changed state: merged, else closed, else labeled."""
        return self.merged_at or self.closed_at or self.labeled_at


@dataclass(frozen=True)
class Closing:
    """What a `pull_request` `closed` delivery says about the PR."""

    repo: str
    number: int
    title: str
    url: str
    merged: bool
    at: float
    merge_commit: str | None = None
    labels: tuple[str, ...] = field(default_factory=tuple)  # the labels it carried when closed


class LabelLog(Protocol):
    """What the handlers write and the feed and `flagbot labeled` read."""

    def labeled(self, entry: LabeledPR) -> None: ...
    def unlabeled(self, repo: str, number: int, label: str, at: float) -> None: ...
    def closed(self, closing: Closing) -> None: ...
    def find(self, label: str, *, repo: str | None = None, since: float | None = None,
             state: str = "merged", limit: int | None = None) -> list[LabeledPR]: ...


def keep(entry: LabeledPR, *, repo: str | None, since: float | None, state: str) -> bool:
    """Whether a listing shows `entry` (the same rule for every store)."""
    if entry.unlabeled_at is not None:
        return False
    if repo is not None and entry.repo.lower() != repo.lower():
        return False
    if state != "all" and entry.state != state:
        return False
    return since is None or entry.sort_time() >= since


def after_closing(entry: LabeledPR, closing: Closing) -> LabeledPR:
    """`entry` once its PR closed: merged or closed, and unlabeled if the label was gone by then."""
    carried = {name.lower() for name in closing.labels}
    return replace(
        entry, title=closing.title or entry.title, url=closing.url or entry.url,
        state="merged" if closing.merged else "closed",
        merged_at=closing.at if closing.merged else None,
        closed_at=closing.at, merge_commit=closing.merge_commit if closing.merged else None,
        unlabeled_at=entry.unlabeled_at if entry.label.lower() in carried else closing.at)


def newest_first(entries: Sequence[LabeledPR], limit: int | None) -> list[LabeledPR]:
    """Entries by the time they last changed state, newest first, at most `limit`."""
    ordered = sorted(entries, key=lambda e: (e.sort_time(), e.repo, e.number), reverse=True)
    return ordered[:limit] if limit is not None else ordered
