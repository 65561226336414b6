"""The store in SQLite files under `FLAGBOT_STATE_DIR`: the ledger (`ledger.db`) and the Huey
queue's storage (`queue.db`), for one host. File settings and checkpoints: `store/sqlite_file.py`.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from huey import Huey
from huey.constants import EmptyData
from huey.storage import SqliteStorage

from flagbot.bot.store import (
    BEACON_TTL_S,
    MAX_TRIES,
    STATUSES,
    Delivery,
    Recorded,
    abandoned_error,
    decide,
    recorded_new,
)
from flagbot.bot.store.sqlite_file import WriteLock, immediate, lock_path, tune

# A commit writes every page it touched, in full, to the WAL, and a checkpoint writes them again
# into the database; at a few hundred deliveries a second the disk is what stalls a commit. So:
# payloads are stored zlib-compressed (GitHub's JSON shrinks ~10x, below one page), and in their
# own table, because SQLite rewrites a whole record on every update and a delivery's status
# changes (claim, finish) would copy its payload each time; deliveries is keyed by its id
# (without rowid: no second index to update); payloads by an integer that grows (appends).
SCHEMA = """
create table if not exists deliveries (
    id text primary key, event text not null, action text, repo text,
    status text not null, attempts integer not null default 0, tries_left integer not null,
    error text, received_at real not null, updated_at real not null, finished_at real,
    redeliveries integer not null default 0, owner text, lease_until real, result text,
    payload_ref integer) without rowid;
create index if not exists deliveries_status on deliveries (status, updated_at);
create index if not exists deliveries_received on deliveries (received_at);
create table if not exists payloads (ref integer primary key, codec text not null,
                                     data blob not null);
create table if not exists health (k text primary key, v real);
"""
ROW_COLUMNS = ("event, action, repo, status, attempts, tries_left, error, received_at, "
               "updated_at, finished_at, redeliveries, owner, lease_until, result")
def pack(payload: bytes) -> tuple[str, bytes]:
    """(codec, data) to store for a payload: zlib when that is smaller."""
    packed = zlib.compress(payload, 1)  # level 1: ~75 us for 14 KB, within 30 % of level 9
    return ("zlib", packed) if len(packed) < len(payload) else ("raw", payload)


def unpack(codec: str | None, data: bytes | None) -> bytes:
    """The payload bytes as GitHub sent them."""
    if data is None:
        return b""
    return zlib.decompress(data) if codec == "zlib" else bytes(data)


def row_to_delivery(row: tuple[Any, ...], payload: bytes) -> Delivery:
    """A Delivery from `id, ROW_COLUMNS` and the payload."""
    return Delivery(row[0], row[1], row[2], row[3], payload, *row[4:])


class SqliteLedger:
    """The ledger in `<state_dir>/ledger.db`: WAL, a busy timeout, one connection per thread."""

    def __init__(self, path: Path, *, background_checkpoints: bool = False,
                 busy_timeout_s: float = 30.0) -> None:
        self.path = path
        self.background_checkpoints = background_checkpoints
        self.busy_timeout_s = busy_timeout_s
        path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self.write_lock = WriteLock(lock_path(path))
        with self.write_lock.held():
            self._conn().executescript(SCHEMA)  # idempotent DDL; executescript commits by itself

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        # a connection must never cross a fork (gunicorn workers) nor a thread
        if conn is None or getattr(self._local, "pid", None) != os.getpid():
            conn = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None)
            conn.execute(f"pragma busy_timeout={int(self.busy_timeout_s * 1000)}")
            tune(conn, background=self.background_checkpoints)
            self._local.conn, self._local.pid = conn, os.getpid()
        return conn

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        # immediate: take SQLite's write lock up front too (readers of other tools may be about)
        with self.write_lock.held(), immediate(self._conn()) as conn:
            yield conn

    def record(self, *, delivery_id: str, event: str, action: str | None, repo: str | None,
               payload: bytes, wanted: bool) -> Recorded:
        """Insert a new delivery, or apply the redelivery rules to a known one."""
        now = time.time()
        status = "queued" if wanted else "dropped"
        with self._tx() as conn:
            cur = conn.execute(
                "insert into deliveries (id, event, action, repo, status, tries_left, "
                "received_at, updated_at) values (?,?,?,?,?,?,?,?) on conflict(id) do nothing",
                (delivery_id, event, action, repo, status, MAX_TRIES, now, now))
            if cur.rowcount == 1:
                ref = conn.execute("insert into payloads (codec, data) values (?, ?)",
                                   pack(payload)).lastrowid
                conn.execute("update deliveries set payload_ref=? where id=?", (ref, delivery_id))
        if cur.rowcount == 1:
            return recorded_new(status, wanted)
        with self._tx() as conn:
            row = conn.execute("select status, lease_until from deliveries where id = ?",
                               (delivery_id,)).fetchone()
            verdict = decide(row[0], row[1], now, wanted)
            if verdict.enqueue:
                conn.execute(
                    "update deliveries set status='queued', tries_left=?, updated_at=?, "
                    "redeliveries=redeliveries+1, owner=null, lease_until=null where id=?",
                    (MAX_TRIES, now, delivery_id))
        return verdict

    def claim(self, delivery_id: str, owner: str, lease_s: float) -> Delivery | None:
        """Take a queued (or abandoned running) delivery for `owner`; None when not claimable."""
        now = time.time()
        with self._tx() as conn:
            cur = conn.execute(
                "update deliveries set status='running', attempts=attempts+1, "
                "tries_left=max(tries_left-1, 0), owner=?, lease_until=?, updated_at=? "
                "where id=? and (status='queued' or "
                "(status='running' and lease_until<? and tries_left>0)) "
                f"returning id, {ROW_COLUMNS}, payload_ref",
                (owner, now + lease_s, now, delivery_id, now))
            row = cur.fetchone()
        if row is None:
            return None
        found = self._conn().execute("select codec, data from payloads where ref=?",
                                     (row[-1],)).fetchone()
        return row_to_delivery(row[:-1], unpack(*(found or (None, None))))

    def finish(self, delivery_id: str, owner: str, result: str) -> bool:
        """Mark done; False when `owner` no longer holds the row (its lease was taken over)."""
        now = time.time()
        with self._tx() as conn:
            cur = conn.execute(
                "update deliveries set status='done', finished_at=?, updated_at=?, result=?, "
                "error=null, lease_until=null where id=? and owner=? and status='running'",
                (now, now, result, delivery_id, owner))
        return cur.rowcount == 1

    def fail(self, delivery_id: str, owner: str, error: str, *, retry_at: float | None) -> bool:
        """Record a failed try: queued again for `retry_at`, or failed until redelivered."""
        now = time.time()
        status, updated = ("queued", retry_at) if retry_at is not None else ("failed", now)
        with self._tx() as conn:
            cur = conn.execute(
                "update deliveries set status=?, error=?, updated_at=?, lease_until=null, "
                "finished_at=? where id=? and owner=? and status='running'",
                (status, error, updated, None if retry_at else now, delivery_id, owner))
        return cur.rowcount == 1

    def heartbeat(self, ids: Iterable[str], owner: str, lease_s: float) -> None:
        """Extend the lease of the rows `owner` is running."""
        until = time.time() + lease_s
        with self._tx() as conn:
            conn.executemany(
                "update deliveries set lease_until=? where id=? and owner=? and status='running'",
                [(until, i, owner) for i in ids])

    def fail_abandoned(self) -> list[tuple[str, str]]:
        """Mark failed the rows whose worker died during their last try; (id, event) of each."""
        now = time.time()
        with self._tx() as conn:
            rows = conn.execute(
                "select id, event, attempts from deliveries where status='running' and "
                "lease_until<? and tries_left<=0", (now,)).fetchall()
            conn.executemany(
                "update deliveries set status='failed', error=?, updated_at=?, finished_at=?, "
                "lease_until=null where id=? and status='running'",
                [(abandoned_error(attempts), now, now, i) for i, _, attempts in rows])
        return [(i, event) for i, event, _ in rows]

    def stale(self, *, queued_grace_s: float) -> list[str]:
        """Rows a worker must queue again: running with an expired lease and tries left, or
        queued too long."""
        now = time.time()
        with self._tx() as conn:
            rows = conn.execute(
                "select id from deliveries where "
                "(status='running' and lease_until<? and tries_left>0) "
                "or (status='queued' and updated_at<?) order by received_at",
                (now, now - queued_grace_s)).fetchall()
            ids = [r[0] for r in rows]
            # touched, so the next sweep does not queue the same rows again at once
            conn.executemany("update deliveries set updated_at=? where id=? and status='queued'",
                             [(now, i) for i in ids])
        return ids

    def get(self, delivery_id: str) -> Delivery | None:
        """The row for `delivery_id`, or None."""
        row = self._conn().execute(
            f"select id, {ROW_COLUMNS}, codec, data from deliveries "
            "left join payloads on ref = payload_ref where id=?", (delivery_id,)).fetchone()
        return None if row is None else row_to_delivery(row[:-2], unpack(row[-2], row[-1]))

    def counts(self) -> dict[str, int]:
        """Number of rows per status."""
        rows = self._conn().execute("select status, count(*) from deliveries group by status")
        found = dict(rows.fetchall())
        return {s: int(found.get(s, 0)) for s in STATUSES}

    def check_writable(self) -> None:
        """Raise when the ledger cannot take a write (disk full, read-only, locked for too long)."""
        with self._tx() as conn:
            conn.execute("insert or replace into health (k, v) values ('probe', ?)", (time.time(),))

    def release(self, delivery_id: str, owner: str, reason: str) -> bool:
        """Put a running delivery back in the queue, its try not counted (a worker stopping)."""
        with self._tx() as conn:
            cur = conn.execute(
                "update deliveries set status='queued', tries_left=tries_left+1, error=?, "
                "updated_at=?, owner=null, lease_until=null where id=? and owner=? "
                "and status='running'", (reason, time.time(), delivery_id, owner))
        return cur.rowcount == 1

    def beacon(self, name: str, at: float) -> None:
        """Record that worker `name` last made progress at `at` (read by /healthz)."""
        with self._tx() as conn:
            conn.execute("insert or replace into health (k, v) values (?, ?)", ("beacon:" + name, at))
            conn.execute("delete from health where k like 'beacon:%' and v < ?",
                         (time.time() - BEACON_TTL_S,))

    def beacons(self) -> dict[str, float]:
        """Each worker's last progress."""
        rows = self._conn().execute("select k, v from health where k like 'beacon:%'").fetchall()
        return {k[len("beacon:"):]: float(v) for k, v in rows}

    def recent(self, *, limit: int, offset: int = 0) -> list[Delivery]:
        """Rows newest first, without their payloads (the dashboard's list)."""
        rows = self._conn().execute(
            f"select id, {ROW_COLUMNS} from deliveries order by received_at desc "
            "limit ? offset ?", (limit, offset)).fetchall()
        return [row_to_delivery(row, b"") for row in rows]

    def oldest_waiting(self) -> float | None:
        """Since when the longest-waiting queued row has waited (None: nothing queued)."""
        row = self._conn().execute(
            "select min(updated_at) from deliveries where status='queued'").fetchone()
        return None if row is None or row[0] is None else float(row[0])


class QueueStorage(SqliteStorage):  # type: ignore[misc]
    """Huey's SQLite storage with the ledger's file settings (`tune`), and writers handed over by
    the flock of `WriteLock` instead of SQLite's sleeping busy handler.

    Connections are tuned by the `factory` Huey passes on to `sqlite3.connect` (its public
    pass-through), with Huey's own journal-mode step off, because the page size must be set
    before WAL. `db` is Huey's transaction helper (not a documented hook): its shape is pinned by
    tests/bot/test_queue.py, and pyproject.toml pins the Huey versions it was tested with.
    """

    def __init__(self, *args: Any, background_checkpoints: bool = False, **kwargs: Any) -> None:
        self.write_lock = WriteLock(lock_path(Path(kwargs["filename"])))
        kwargs.update(journal_mode=None, factory=tuned_connection(background_checkpoints))
        super().__init__(*args, **kwargs)

    @contextmanager
    def db(self, commit: bool = False, close: bool = False) -> Iterator[Any]:
        if not commit:
            with super().db(commit, close) as cursor:
                yield cursor
            return
        with self.write_lock.held(), super().db(commit, close) as cursor:
            yield cursor

    def pop_data(self, key: bytes | str) -> Any:
        """Huey pops a task's revoke key after every run; read first, and take a write
        transaction (and the write lock) only when there is something to delete (we never
        revoke, so one write transaction less per delivery)."""
        if not self.has_data_for_key(key):
            return EmptyData
        return super().pop_data(key)


def tuned_connection(background: bool) -> type[sqlite3.Connection]:
    """A `sqlite3.Connection` class that runs `tune` on every new connection."""

    class TunedConnection(sqlite3.Connection):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            tune(self, background=background)

    return TunedConnection


def queue_huey(name: str, path: Path, *, background_checkpoints: bool) -> Huey:
    """The Huey instance on the SQLite queue file at `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return Huey(name, storage_class=QueueStorage, results=False, filename=str(path), timeout=30,
                background_checkpoints=background_checkpoints)
