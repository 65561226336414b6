"""The label log in `<state dir>/feed.db` (SQLite, WAL): written by the worker, read by the
web server and `flagbot labeled`. A few writes per PR, so no write-lock hand-over is needed here."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

from flagbot.bot.feed.log import Closing, LabeledPR, after_closing, keep, newest_first
from flagbot.bot.store.sqlite_file import Connections, immediate, open_wal

SCHEMA = """
create table if not exists labeled (
    repo text not null collate nocase, number integer not null, label text not null collate nocase,
    title text not null, url text not null, paths text not null, state text not null,
    labeled_at real not null, merged_at real, closed_at real, merge_commit text, unlabeled_at real,
    primary key (repo, number, label));
create index if not exists labeled_by_label on labeled (label, state, merged_at);
create index if not exists labeled_by_time on labeled (label, state, coalesce(merged_at, closed_at, labeled_at));
"""
# newest state change first, as feed/log.newest_first orders
ORDER = "order by coalesce(merged_at, closed_at, labeled_at) desc, repo desc, number desc"
COLUMNS = ("repo, number, label, title, url, paths, state, labeled_at, merged_at, closed_at, "
           "merge_commit, unlabeled_at")


def to_row(e: LabeledPR) -> tuple[Any, ...]:
    return (e.repo, e.number, e.label, e.title, e.url, json.dumps(list(e.paths)), e.state,
            e.labeled_at, e.merged_at, e.closed_at, e.merge_commit, e.unlabeled_at)


def from_row(row: tuple[Any, ...]) -> LabeledPR:
    return LabeledPR(row[0], int(row[1]), row[2], row[3], row[4], tuple(json.loads(row[5])),
                     *row[6:])


class SqliteLabelLog:
    """The label log in one SQLite file; `create=False` reads a missing file as empty."""

    def __init__(self, path: Path, *, create: bool = True, busy_timeout_s: float = 30.0) -> None:
        self.path = path
        self.exists = create or path.exists()
        self.connections = open_wal(path, SCHEMA, timeout_s=busy_timeout_s) if create else \
            Connections(path, timeout_s=busy_timeout_s)

    def _conn(self) -> sqlite3.Connection:
        return self.connections.get()

    def _entries(self, where: str, args: tuple[Any, ...]) -> list[LabeledPR]:
        if not self.exists:
            return []
        rows = self._conn().execute(f"select {COLUMNS} from labeled where {where}", args)
        return [from_row(r) for r in rows.fetchall()]

    def labeled(self, entry: LabeledPR) -> None:
        """Record (or refresh) that the PR carries `entry.label` for `entry.paths`."""
        old = self._entries("repo=? and number=? and label=?", (entry.repo, entry.number, entry.label))
        if old and old[0].unlabeled_at is None:
            entry = replace(entry, labeled_at=old[0].labeled_at)  # first labeled, not last seen
        self._conn().execute(f"insert or replace into labeled ({COLUMNS}) values "
                             "(?,?,?,?,?,?,?,?,?,?,?,?)", to_row(entry))

    def unlabeled(self, repo: str, number: int, label: str, at: float) -> None:
        """The PR lost `label`: drop it from every listing."""
        self._conn().execute("update labeled set unlabeled_at=? where repo=? and number=? and "
                             "label=? and unlabeled_at is null", (at, repo, number, label))

    def closed(self, closing: Closing) -> None:
        """The PR was merged or closed: update each of its entries."""
        with immediate(self._conn()) as conn:
            for entry in self._entries("repo=? and number=?", (closing.repo, closing.number)):
                conn.execute(f"insert or replace into labeled ({COLUMNS}) values "
                             "(?,?,?,?,?,?,?,?,?,?,?,?)", to_row(after_closing(entry, closing)))

    def find(self, label: str, *, repo: str | None = None, since: float | None = None,
             state: str = "merged", limit: int | None = None) -> list[LabeledPR]:
        """Entries carrying `label` in `state` (or "all"), newest first."""
        # filtered, ordered and cut in SQL (an index serves it): a label with 200,000 entries
        # costs a feed read its page, not the whole log
        where: list[str] = ["label=?", "unlabeled_at is null"]
        args: list[object] = [label]
        if state != "all":
            where.append("state=?")
            args.append(state)
        if repo is not None:
            where.append("repo=?")
            args.append(repo)
        if since is not None:
            where.append("coalesce(merged_at, closed_at, labeled_at) >= ?")
            args.append(since)
        tail = f" {ORDER}" + (" limit ?" if limit is not None else "")
        if limit is not None:
            args.append(max(limit, 0))
        found = self._entries(" and ".join(where) + tail, tuple(args))
        return newest_first([e for e in found if keep(e, repo=repo, since=since, state=state)], limit)
