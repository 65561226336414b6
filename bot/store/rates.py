"""How often each commenter and each pull request asked the bot for something lately: the
counters behind the slash commands' rate limits, shared by every worker (SQLite file beside the
ledger, or Redis).

A window is a sliding log of hit times per key; `hit` records one and says whether the key was
still within its limit. Over the limit nothing is recorded, so a flood costs one cheap local
check per comment and no GitHub call at all.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Protocol

from flagbot.bot.store.sqlite_file import immediate, open_wal

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
        self.connections = open_wal(path, SCHEMA)

    def hit(self, key: str, limit: int, window_s: float, now: float | None = None,
            member: str = "") -> bool:
        """True (and one hit recorded) when `key` had fewer than `limit` hits in the window;
        a `member` already recorded in the window counts once (a deferred delivery run again)."""
        now = time.time() if now is None else now
        with immediate(self.connections.get()) as conn:
            conn.execute("delete from hits where key=? and at<?", (key, now - window_s))
            if member and conn.execute("select 1 from hits where key=? and member=?",
                                       (key, member)).fetchone():
                return True
            (count,) = conn.execute("select count(*) from hits where key=?", (key,)).fetchone()
            if count >= limit:
                return False
            conn.execute("insert into hits (key, at, member) values (?, ?, ?)",
                         (key, now, member or None))
            return True


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
