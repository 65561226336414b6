"""bot/store/sqlite_file.py: page size, checkpoint modes, and the background checkpointer that
keeps the WAL from growing while writers never stop."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from flagbot.bot.store import sqlite_file
from flagbot.bot.store.sqlite import SqliteLedger
from flagbot.bot.store.sqlite_file import BACKSTOP_PAGES, PAGE_SIZE, Checkpointer


def pragma(path: Path, name: str) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute(f"pragma {name}").fetchone()[0])


def wal_frames(path: Path) -> int:
    """Frames in the current WAL generation (what a passive checkpoint reports)."""
    with sqlite3.connect(path) as conn:
        return int(conn.execute("pragma wal_checkpoint(passive)").fetchone()[1])


def add(led: SqliteLedger, n: int, prefix: str = "d") -> None:
    for i in range(n):
        led.record(delivery_id=f"{prefix}-{i}", event="pull_request", action="opened",
                   repo="o/r", payload=b'{"x": "' + b"y" * 3000 + b'"}', wanted=True)


def test_new_files_get_small_pages_and_old_files_keep_theirs(tmp_path: Path) -> None:
    SqliteLedger(tmp_path / "new.db")
    assert pragma(tmp_path / "new.db", "page_size") == PAGE_SIZE
    with sqlite3.connect(tmp_path / "old.db") as conn:
        conn.execute("pragma page_size=4096")
        conn.execute("create table t (x)")
    led = SqliteLedger(tmp_path / "old.db")
    add(led, 3)
    assert pragma(tmp_path / "old.db", "page_size") == 4096 and led.counts()["queued"] == 3


def test_commits_checkpoint_themselves_unless_a_checkpointer_runs(tmp_path: Path) -> None:
    assert SqliteLedger(tmp_path / "a.db")._conn().execute(
        "pragma wal_autocheckpoint").fetchone()[0] == 1000
    assert SqliteLedger(tmp_path / "b.db", background_checkpoints=True)._conn().execute(
        "pragma wal_autocheckpoint").fetchone()[0] == BACKSTOP_PAGES


WRITER_ROWS = 20


def test_the_checkpointer_starts_the_wal_over_while_writers_keep_writing(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    led = SqliteLedger(path, background_checkpoints=True)
    stop = threading.Event()
    # SQLite starts the WAL over at the first write after a complete checkpoint when no other
    # connection is reading at that moment; the other writer pauses for the checkpoint and that
    # first write (in production the moment comes between deliveries), and writes at most
    # WRITER_ROWS rows a round, so a round's size does not hang on thread scheduling.
    quiet = threading.Lock()
    budget = threading.Semaphore(0)

    def writer() -> None:
        n = 0
        while not stop.is_set():
            if not budget.acquire(timeout=0.05):
                continue
            with quiet:
                add(led, 1, prefix=f"w{n}")
            n += 1

    thread = threading.Thread(target=writer)
    thread.start()
    checkpointer = Checkpointer([path, tmp_path / "missing.db"])
    conns: dict[Path, sqlite3.Connection] = {}
    try:
        sizes = []
        for _ in range(6):
            for _ in range(WRITER_ROWS):
                budget.release()
            add(led, 150, prefix=f"round{len(sizes)}")
            with quiet:
                checkpointer.checkpoint_once(conns)  # a missing file is skipped, not created
                add(led, 1, prefix=f"restart{len(sizes)}")
            sizes.append((path.with_name("ledger.db-wal")).stat().st_size)
    finally:
        stop.set()
        thread.join()
    assert not (tmp_path / "missing.db").exists()
    # the WAL was started over each round: its file stops growing at one round's worth
    assert sizes[-1] <= max(sizes[:3]) * 1.5
    add(led, 1, prefix="after")
    checkpointer.checkpoint_once(conns)
    add(led, 1, prefix="after2")
    assert wal_frames(path) < 50  # only the last commit's pages


def test_the_checkpointer_thread_survives_a_failing_round(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rounds = []

    def failing(self: Checkpointer, conns: dict[Path, sqlite3.Connection]) -> None:
        rounds.append(1)
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(sqlite_file.Checkpointer, "checkpoint_once", failing)
    checkpointer = Checkpointer([tmp_path / "x.db"], every_s=0.01)
    checkpointer.start()
    try:
        threading.Event().wait(0.2)
        assert len(rounds) >= 3 and checkpointer._thread is not None
        assert checkpointer._thread.is_alive()
    finally:
        checkpointer.stop()
    assert not checkpointer._thread.is_alive()


def test_the_queue_file_is_tuned_like_the_ledger(tmp_path: Path) -> None:
    from flagbot.bot.settings import Settings
    from flagbot.bot.store.factory import open_queue

    open_queue(Settings(state_dir=tmp_path, background_checkpoints=True)).enqueue("d-1")
    assert pragma(tmp_path / "queue.db", "page_size") == PAGE_SIZE
    with sqlite3.connect(tmp_path / "queue.db") as conn:
        assert conn.execute("pragma journal_mode").fetchone()[0] == "wal"
    storage = open_queue(Settings(state_dir=tmp_path, background_checkpoints=True)).huey.storage
    assert storage.conn.execute("pragma wal_autocheckpoint").fetchone()[0] == BACKSTOP_PAGES
