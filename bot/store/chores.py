"""What the bot's periodic chores remember between runs and hosts: a few named values (the newest
delivery reconciled, when a chore last ran) and the log of redeliveries reconciliation asked for.

Beside the ledger, in the same place: the `chores` and `reconciled` tables of `ledger.db`
(SQLite, written under the ledger's write lock) or `flagbot:chores` / `flagbot:reconciled`
hashes in Redis. `open_chores` picks one from the settings, as `store/factory.py` does.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from flagbot.bot.settings import Settings
from flagbot.bot.store.sqlite_file import Connections, WriteLock, immediate, lock_path, tune

SCHEMA = """
create table if not exists chores (k text primary key, v text not null);
create table if not exists reconciled (guid text primary key, hook_id integer not null,
    event text not null, action text, reason text not null, requested_at real not null);
"""
REDIS_VALUES, REDIS_RECONCILED = "flagbot:chores", "flagbot:reconciled"
# notes older than GitHub keeps deliveries for redelivery (3 days) are of no use to anyone
NOTE_TTL_S = 4 * 86400.0


@dataclass(frozen=True)
class Reconciled:
    """One redelivery reconciliation asked GitHub for: which delivery, why, when."""

    guid: str
    hook_id: int  # the id of the attempt in GitHub's delivery log that was redelivered
    event: str
    action: str | None
    reason: str  # missing (the ledger lacks it) | failed (its handlers failed here)
    requested_at: float


class Chores(Protocol):
    """Named values and the reconciliation notes."""

    def get(self, key: str) -> str | None: ...
    def put(self, key: str, value: str) -> None: ...
    def note(self, entry: Reconciled) -> None: ...
    def noted(self, guid: str) -> Reconciled | None: ...
    def notes(self, limit: int = 100) -> list[Reconciled]: ...


class SqliteChores:
    """Chores' state in `ledger.db`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.connections = Connections(path, setup=lambda conn: tune(conn, background=False))
        self.write_lock = WriteLock(lock_path(path))
        with self.write_lock.held():
            self._conn().executescript(SCHEMA)

    def _conn(self) -> sqlite3.Connection:
        return self.connections.get()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self.write_lock.held(), immediate(self._conn()) as conn:
            yield conn

    def get(self, key: str) -> str | None:
        row = self._conn().execute("select v from chores where k=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def put(self, key: str, value: str) -> None:
        with self._tx() as conn:
            conn.execute("insert or replace into chores (k, v) values (?, ?)", (key, value))

    def note(self, entry: Reconciled) -> None:
        with self._tx() as conn:
            conn.execute("insert or replace into reconciled values (?,?,?,?,?,?)",
                         (entry.guid, entry.hook_id, entry.event, entry.action, entry.reason,
                          entry.requested_at))
            conn.execute("delete from reconciled where requested_at<?",
                         (entry.requested_at - NOTE_TTL_S,))

    def noted(self, guid: str) -> Reconciled | None:
        row = self._conn().execute("select * from reconciled where guid=?", (guid,)).fetchone()
        return None if row is None else Reconciled(*row)

    def notes(self, limit: int = 100) -> list[Reconciled]:
        rows = self._conn().execute(
            "select * from reconciled order by requested_at desc limit ?", (limit,)).fetchall()
        return [Reconciled(*row) for row in rows]


class RedisChores:
    """Chores' state in Redis, shared by every worker host."""

    def __init__(self, url: str) -> None:
        import redis  # redis-py only in Redis mode

        self.client = redis.Redis.from_url(url)

    def get(self, key: str) -> str | None:
        value: Any = self.client.hget(REDIS_VALUES, key)
        return None if value is None else bytes(value).decode()

    def put(self, key: str, value: str) -> None:
        self.client.hset(REDIS_VALUES, key, value)

    def note(self, entry: Reconciled) -> None:
        self.client.hset(REDIS_RECONCILED, entry.guid, json.dumps(asdict(entry)))
        old = [e.guid for e in self._all() if e.requested_at < entry.requested_at - NOTE_TTL_S]
        if old:
            self.client.hdel(REDIS_RECONCILED, *old)

    def noted(self, guid: str) -> Reconciled | None:
        raw: Any = self.client.hget(REDIS_RECONCILED, guid)
        return None if raw is None else Reconciled(**json.loads(raw))

    def _all(self) -> list[Reconciled]:
        raw: Any = self.client.hgetall(REDIS_RECONCILED)
        return [Reconciled(**json.loads(v)) for v in raw.values()]

    def notes(self, limit: int = 100) -> list[Reconciled]:
        return sorted(self._all(), key=lambda e: e.requested_at, reverse=True)[:limit]


def open_chores(settings: Settings) -> Chores:
    """The chores' state for these settings: Redis with FLAGBOT_REDIS_URL, else `ledger.db`."""
    if settings.redis_url:
        return RedisChores(settings.redis_url)
    return SqliteChores(settings.ledger_path)
