"""flagbot.bot.store.queue: one task, durable on disk (SQLite, WAL) or in Redis."""

# ruff: noqa: F811  (fixtures imported from tests/bot/core_support.py, then used as arguments)

from __future__ import annotations

import datetime
import sqlite3
from pathlib import Path

from flagbot.bot.settings import Settings
from flagbot.bot.store.factory import open_queue
from tests.bot.core_support import redis_server, redis_url  # noqa: F401  (fixtures)


def test_enqueued_ids_survive_a_new_queue_object(tmp_path: Path) -> None:
    settings = Settings(state_dir=tmp_path)
    open_queue(settings).enqueue("a")
    open_queue(settings).enqueue("b")
    again = open_queue(settings)  # as after a restart: the queue is the file, not the object
    assert again.depth() == 2
    assert [t.args for t in again.huey.pending()] == [("a",), ("b",)]


def test_one_generic_task_carries_only_the_delivery_id(tmp_path: Path) -> None:
    queue = open_queue(Settings(state_dir=tmp_path))
    queue.enqueue("d-1")
    (task,) = queue.huey.pending()
    assert type(task).__name__ == "process_delivery" and task.args == ("d-1",)


def test_executing_side_runs_the_given_function(tmp_path: Path) -> None:
    seen: list[str] = []
    queue = open_queue(Settings(state_dir=tmp_path), seen.append)
    queue.enqueue("d-1")
    queue.huey.execute(queue.huey.dequeue())
    assert seen == ["d-1"] and queue.depth() == 0


def test_a_scheduled_retry_carries_its_delay(tmp_path: Path) -> None:
    queue = open_queue(Settings(state_dir=tmp_path))
    queue.schedule("d-1", 60)
    (task,) = queue.huey.pending()
    wait = (task.eta - datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None))
    assert task.args == ("d-1",) and 50 < wait.total_seconds() <= 60


def test_sqlite_queue_file_is_in_the_state_dir_in_wal_mode(tmp_path: Path) -> None:
    open_queue(Settings(state_dir=tmp_path / "state")).enqueue("x")
    conn = sqlite3.connect(tmp_path / "state" / "queue.db")
    assert conn.execute("pragma journal_mode").fetchone()[0] == "wal"


def test_redis_url_switches_the_queue_to_redis(redis_url: str, tmp_path: Path) -> None:
    settings = Settings(state_dir=tmp_path, redis_url=redis_url)
    assert type(open_queue(settings).huey).__name__ == "RedisHuey"
    open_queue(settings).enqueue("r-1")
    assert open_queue(settings).depth() == 1
    assert not (tmp_path / "queue.db").exists()


def test_the_queue_storage_still_matches_the_huey_it_overrides() -> None:
    """QueueStorage wraps Huey's `db` transaction helper (not a documented hook) and relies on
    Huey passing unknown keywords on to `sqlite3.connect`: fail when either changes shape."""
    import inspect

    from huey.storage import SqliteStorage

    assert list(inspect.signature(SqliteStorage.db).parameters) == ["self", "commit", "close"]
    source = inspect.getsource(SqliteStorage)
    assert "self._conn_kwargs = kwargs" in source and "**self._conn_kwargs" in source
    assert "if commit: cursor.execute(self.begin_sql)" in inspect.getsource(SqliteStorage.db)


def test_queue_writes_hold_the_files_write_lock(tmp_path: Path) -> None:
    queue = open_queue(Settings(state_dir=tmp_path))
    storage = queue.huey.storage
    taken: list[int] = []
    held = storage.write_lock.held

    def spy():  # type: ignore[no-untyped-def]
        taken.append(1)
        return held()

    storage.write_lock.held = spy
    queue.enqueue("d-1")
    assert taken
