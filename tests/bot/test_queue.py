"""flagbot.bot.queue: one task, durable on disk (SQLite, WAL) or in Redis."""

# ruff: noqa: F811  (fixtures imported from tests/bot/core_support.py, then used as arguments)

from __future__ import annotations

import datetime
import sqlite3
from pathlib import Path

from flagbot.bot.queue import DeliveryQueue, make_huey
from flagbot.bot.settings import Settings
from tests.bot.core_support import redis_server, redis_url  # noqa: F401  (fixtures)


def test_enqueued_ids_survive_a_new_queue_object(tmp_path: Path) -> None:
    settings = Settings(state_dir=tmp_path)
    DeliveryQueue(settings).enqueue("a")
    DeliveryQueue(settings).enqueue("b")
    again = DeliveryQueue(settings)  # as after a restart: the queue is the file, not the object
    assert again.depth() == 2
    assert [t.args for t in again.huey.pending()] == [("a",), ("b",)]


def test_one_generic_task_carries_only_the_delivery_id(tmp_path: Path) -> None:
    queue = DeliveryQueue(Settings(state_dir=tmp_path))
    queue.enqueue("d-1")
    (task,) = queue.huey.pending()
    assert type(task).__name__ == "process_delivery" and task.args == ("d-1",)


def test_executing_side_runs_the_given_function(tmp_path: Path) -> None:
    seen: list[str] = []
    queue = DeliveryQueue(Settings(state_dir=tmp_path), seen.append)
    queue.enqueue("d-1")
    queue.huey.execute(queue.huey.dequeue())
    assert seen == ["d-1"] and queue.depth() == 0


def test_a_scheduled_retry_carries_its_delay(tmp_path: Path) -> None:
    queue = DeliveryQueue(Settings(state_dir=tmp_path))
    queue.schedule("d-1", 60)
    (task,) = queue.huey.pending()
    wait = (task.eta - datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None))
    assert task.args == ("d-1",) and 50 < wait.total_seconds() <= 60


def test_sqlite_queue_file_is_in_the_state_dir_in_wal_mode(tmp_path: Path) -> None:
    DeliveryQueue(Settings(state_dir=tmp_path / "state")).enqueue("x")
    conn = sqlite3.connect(tmp_path / "state" / "queue.db")
    assert conn.execute("pragma journal_mode").fetchone()[0] == "wal"


def test_redis_url_switches_the_queue_to_redis(redis_url: str, tmp_path: Path) -> None:
    settings = Settings(state_dir=tmp_path, redis_url=redis_url)
    assert type(make_huey(settings)).__name__ == "RedisHuey"
    DeliveryQueue(settings).enqueue("r-1")
    assert DeliveryQueue(settings).depth() == 1
    assert not (tmp_path / "queue.db").exists()
