"""The dashboard store in `<state dir>/dashboard.db` (SQLite, WAL): written by the worker, read
by the web server. A few writes per device run, so SQLite's own locking is enough here."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from flagbot.bot.dashboard.store import MAX_RESULTS, MAX_RUNS, DeviceRun, KernelResult, RunFilter
from flagbot.bot.store.sqlite_file import immediate, open_wal

SCHEMA = """
create table if not exists runs (
    seq integer primary key, request text not null unique, repo text not null, pr integer not null,
    sha text not null, device text not null, status text not null, conclusion text,
    queued_at real not null, started_at real, finished_at real, run_id integer, url text,
    retries integer not null default 0);
create index if not exists runs_by_device on runs (device, seq);
create index if not exists runs_by_repo on runs (repo collate nocase, seq);
create index if not exists runs_by_head on runs (repo, pr, sha, device);
create table if not exists results (
    seq integer primary key, repo text not null, pr integer not null, sha text not null,
    device text not null, op text not null, kind text not null, verdict text not null,
    vs_baseline real, vs_native real, accuracy real, at real not null);
create index if not exists results_by_device on results (device, seq);
"""
RUN_COLUMNS = ("request, repo, pr, sha, device, status, conclusion, queued_at, started_at, "
               "finished_at, run_id, url, retries")
RESULT_COLUMNS = "repo, pr, sha, device, op, kind, verdict, vs_baseline, vs_native, accuracy, at"


class SqliteDashStore:
    """Device runs and kernel results in one SQLite file, the newest `MAX_*` of each kept."""

    def __init__(self, path: Path, *, busy_timeout_s: float = 30.0) -> None:
        self.path = path
        self.connections = open_wal(path, SCHEMA, timeout_s=busy_timeout_s)

    def _conn(self) -> sqlite3.Connection:
        return self.connections.get()

    def _write(self, statements: list[tuple[str, tuple[Any, ...]]]) -> None:
        with immediate(self._conn()) as conn:
            for sql, args in statements:
                conn.execute(sql, args)

    def run_started(self, run: DeviceRun) -> None:
        """Record a new request (a restarted request keeps its first row)."""
        self._write([
            (f"insert into runs ({RUN_COLUMNS}) values (?,?,?,?,?,?,?,?,?,?,?,?,"
             "(select count(*) from runs where repo=? and pr=? and sha=? and device=?)) "
             "on conflict(request) do nothing",
             (run.request, run.repo, run.pr, run.sha, run.device, run.status, run.conclusion,
              run.queued_at, run.started_at, run.finished_at, run.run_id, run.url,
              run.repo, run.pr, run.sha, run.device)),
            ("delete from runs where seq <= (select max(seq) from runs) - ?", (MAX_RUNS,))])

    def run_moved(self, request: str, *, status: str, at: float, conclusion: str | None = None,
                  run_id: int | None = None, url: str | None = None) -> None:
        """The request's run is now `status` (`in_progress` from `at`, or `completed` at `at`)."""
        started = at if status == "in_progress" else None
        finished = at if status == "completed" else None
        self._write([(
            "update runs set status=?, conclusion=coalesce(?, conclusion), "
            "started_at=coalesce(started_at, ?), finished_at=coalesce(?, finished_at), "
            "run_id=coalesce(?, run_id), url=coalesce(?, url) where request=?",
            (status, conclusion, started, finished, run_id, url, request))])

    def add_results(self, results: list[KernelResult]) -> None:
        """Keep one report's per-op results."""
        if not results:
            return
        rows: list[tuple[str, tuple[Any, ...]]] = [
            (f"insert into results ({RESULT_COLUMNS}) values (?,?,?,?,?,?,?,?,?,?,?)",
             (r.repo, r.pr, r.sha, r.device, r.op, r.kind, r.verdict, r.vs_baseline,
              r.vs_native, r.accuracy, r.at)) for r in results]
        rows.append(("delete from results where seq <= (select max(seq) from results) - ?",
                     (MAX_RESULTS,)))
        self._write(rows)

    def runs(self, where: RunFilter, *, limit: int, offset: int = 0) -> list[DeviceRun]:
        """Runs newest first, filtered by device and repository."""
        clauses, args = ["1"], []
        if where.device:
            clauses.append("device=?")
            args.append(where.device)
        if where.repo:
            clauses.append("repo=? collate nocase")
            args.append(where.repo)
        rows = self._conn().execute(
            f"select {RUN_COLUMNS} from runs where {' and '.join(clauses)} "
            "order by seq desc limit ? offset ?", (*args, limit, offset)).fetchall()
        return [DeviceRun(*row) for row in rows]

    def run_facets(self) -> tuple[list[str], list[str]]:
        """The devices and repositories that have runs (for the filter)."""
        conn = self._conn()
        devices = [r[0] for r in conn.execute("select distinct device from runs order by 1")]
        repos = [r[0] for r in conn.execute("select distinct repo from runs order by 1")]
        return devices, repos

    def results(self, *, device: str | None = None, limit: int = 2_000) -> list[KernelResult]:
        """The newest `limit` results (of `device`), oldest first."""
        where, args = ("where device=?", (device,)) if device else ("", ())
        rows = self._conn().execute(
            f"select {RESULT_COLUMNS} from results {where} order by seq desc limit ?",
            (*args, limit)).fetchall()
        return [KernelResult(*row) for row in reversed(rows)]
