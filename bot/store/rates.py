"""How often each commenter and each pull request asked the bot for something lately: the
counters behind the slash commands' rate limits, shared by every worker (SQLite file beside the
ledger, or Redis).

A window is a sliding log of hit times per key; `hit` records one and says whether the key was
still within its limit. Over the limit nothing is recorded, so a flood costs one cheap local
check per comment and no GitHub call at all.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Protocol

SCHEMA = """
create table if not exists hits (key text not null, at real not null, member text);
create index if not exists hits_by_key on hits (key, at);
"""


class Rates(Protocol):
    def hit(self, key: str, limit: int, window_s: float, now: float | None = None,
            member: str = "") -> bool: ...


class SqliteRates:
    """The counters in one SQLite file (`<state dir>/rates.db`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = self._conn()
        conn.execute("pragma journal_mode=wal")
        conn.executescript(SCHEMA)

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None or getattr(self._local, "pid", None) != os.getpid():
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            self._local.conn, self._local.pid = conn, os.getpid()
        return conn

    def hit(self, key: str, limit: int, window_s: float, now: float | None = None,
            member: str = "") -> bool:
        """True (and one hit recorded) when `key` had fewer than `limit` hits in the window;
        a `member` already recorded in the window counts once (a deferred delivery run again)."""
        now = time.time() if now is None else now
        conn = self._conn()
        conn.execute("begin immediate")
        try:
            conn.execute("delete from hits where key=? and at<?", (key, now - window_s))
            if member and conn.execute("select 1 from hits where key=? and member=?",
                                       (key, member)).fetchone():
                conn.execute("commit")
                return True
            (count,) = conn.execute("select count(*) from hits where key=?", (key,)).fetchone()
            allowed = count < limit
            if allowed:
                conn.execute("insert into hits (key, at, member) values (?, ?, ?)",
                             (key, now, member or None))
        except BaseException:
            conn.execute("rollback")
            raise
        conn.execute("commit")
        return bool(allowed)


class RedisRates:
    """The counters in Redis: one sorted set of hit times per key, expiring with its window."""

    PREFIX = "flagbot:rates:"

    def __init__(self, url: str) -> None:
        import redis

        self.client = redis.Redis.from_url(url)

    def hit(self, key: str, limit: int, window_s: float, now: float | None = None,
            member: str = "") -> bool:
        now = time.time() if now is None else now
        name = self.PREFIX + key
        pipe = self.client.pipeline()
        pipe.zremrangebyscore(name, "-inf", f"({now - window_s!r}")  # as SQLite: older only
        pipe.zcard(name)
        pipe.zscore(name, member or "-")
        _, count, seen = pipe.execute()
        if member and seen is not None:
            return True
        if int(count) >= limit:
            return False
        pipe = self.client.pipeline()
        pipe.zadd(name, {member or f"{now!r}:{os.getpid()}:{threading.get_ident()}": now})
        pipe.expire(name, int(window_s) + 1)
        pipe.execute()
        return True
