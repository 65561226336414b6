"""The durable queue: Huey on SQLite under `FLAGBOT_STATE_DIR`, or on Redis (`FLAGBOT_REDIS_URL`).

There is one task, `process_delivery(delivery_id)`: the message carries only the id, the
ledger holds the payload, and the worker looks the handler up (no per-event task copies).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from huey import Huey, RedisHuey
from huey.constants import EmptyData
from huey.storage import SqliteStorage

from flagbot.bot.settings import Settings
from flagbot.bot.sqlite_store import WriteLock, lock_path, tune

TASK_NAME = "process_delivery"
QUEUE_NAME = "flagbot"


class WalSqliteStorage(SqliteStorage):  # type: ignore[misc]
    """Huey's SQLite storage tuned like the ledger (bot/sqlite_store.py: WAL, no fsync per
    enqueue, checkpoints off the request path) and writers handed over by a flock instead of
    SQLite's sleeping busy handler."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.write_lock = WriteLock(lock_path(Path(kwargs["filename"])))
        super().__init__(*args, **kwargs)

    def _set_journal_mode(self, conn: sqlite3.Connection) -> None:
        # Huey's own hook, called on each new connection: the page size must come before WAL
        tune(conn)

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


def make_huey(settings: Settings) -> Huey:
    """The Huey instance for this deployment: Redis when configured, else SQLite in state_dir."""
    if settings.redis_url:
        return RedisHuey(QUEUE_NAME, url=settings.redis_url, results=False)
    settings.state_dir.mkdir(parents=True, exist_ok=True)
    return Huey(QUEUE_NAME, storage_class=WalSqliteStorage, results=False,
                filename=str(settings.queue_path), timeout=30)


def _not_in_this_process(delivery_id: str) -> None:
    raise RuntimeError(f"delivery {delivery_id}: this process only enqueues; run a worker")


def task_body(process: Callable[[str], None]) -> Callable[[str], None]:
    """Wrap `process` so the task is named `bot.queue.process_delivery` in every process."""

    def process_delivery(delivery_id: str) -> None:
        process(delivery_id)

    return process_delivery


class DeliveryQueue:
    """Enqueue side (ingest) and, given `process`, the executing side (the worker)."""

    def __init__(self, settings: Settings,
                 process: Callable[[str], None] | None = None) -> None:
        self.huey = make_huey(settings)
        self.task: Any = self.huey.task(name=TASK_NAME)(task_body(process or _not_in_this_process))

    def enqueue(self, delivery_id: str) -> None:
        """Queue one run of `process_delivery(delivery_id)`."""
        self.task(delivery_id)

    def schedule(self, delivery_id: str, delay_s: float) -> None:
        """Queue a run after `delay_s` seconds (retries with back-off)."""
        self.task.schedule((delivery_id,), delay=delay_s)

    def depth(self) -> int:
        """Tasks waiting (queued now, not counting scheduled retries)."""
        return int(self.huey.pending_count())

    def scheduled(self) -> int:
        """Retries waiting for their time."""
        return int(self.huey.scheduled_count())
