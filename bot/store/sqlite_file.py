"""What the SQLite ledger and queue files share: the write lock, connection settings, and WAL
checkpoints off the request path. Each setting here was measured to keep a webhook's
acknowledgement under 50 ms at 500 deliveries/s on a 2-core host (benchmarks/RESULTS.md,
"Ingest", has the numbers).

Every file is in WAL mode with synchronous=NORMAL: a commit is a write to the WAL with no
fsync, it survives a crash of any process, and only a power loss can drop the last commits
(GitHub redelivers those; docs/bot.md). The WAL is copied back into the database by a
checkpoint, which fsyncs. By default SQLite checkpoints inside the commit that crosses 1000
WAL pages, i.e. on a webhook request, while that request holds the write lock, so every
writer waits behind one fsync. Processes that serve (`flagbot serve`, `flagbot worker`) run a
`Checkpointer` thread instead and open their connections with `background=True`
(`Settings.sqlite_checkpoints`, which serve also hands to its gunicorn child): passive
checkpoints take no write lock, so acknowledgements never wait for one.
"""

from __future__ import annotations

import fcntl
import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

log = logging.getLogger(__name__)

CHECKPOINT_EVERY_S = 1.0
# if the checkpointer thread is gone, commits still checkpoint once the WAL is this long (20 MB)
BACKSTOP_PAGES = 20_000
# Small pages: a commit writes each page it touched in full to the WAL, and a delivery's commits
# touch a few small rows (payloads are compressed, store/sqlite.py). With 4 KB pages a steady
# 500 deliveries/s wrote ~28 MB/s of WAL and the disk's writeback stalled commits for tens of
# milliseconds; 1 KB pages write a quarter of that.
PAGE_SIZE = 1024
WAL_KEEP_BYTES = 64 * 1024 * 1024  # a WAL that grew in a burst is cut back to this when reset


class WriteLock:
    """Serialises the writers of one SQLite file across threads and processes.

    SQLite's own busy handler makes a blocked writer sleep 1, 2, 5, 10... ms and poll again, so
    two gunicorn workers and the consumer writing at once add milliseconds of pure waiting to an
    acknowledgement. A blocking flock hands the file over the moment the holder commits.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._thread_lock = threading.Lock()
        self._fd: int | None = None
        self._pid = 0

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold the write lock for one short transaction."""
        with self._thread_lock:
            if self._fd is None or self._pid != os.getpid():  # never share an fd across a fork
                self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
                self._pid = os.getpid()
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(self._fd, fcntl.LOCK_UN)


def lock_path(db: Path) -> Path:
    """The file whose flock is `db`'s write lock."""
    return db.with_name(db.name + ".lock")


def tune(conn: sqlite3.Connection, *, background: bool) -> None:
    """WAL, synchronous=NORMAL, and the checkpoint mode (`background`: a `Checkpointer` runs)."""
    conn.execute(f"pragma page_size={PAGE_SIZE}")  # only a new, empty file takes it
    conn.execute("pragma journal_mode=wal")
    conn.execute("pragma synchronous=normal")
    if background:
        conn.execute(f"pragma wal_autocheckpoint={BACKSTOP_PAGES}")
        conn.execute(f"pragma journal_size_limit={WAL_KEEP_BYTES}")


class Checkpointer:
    """A daemon thread that runs a passive checkpoint on each file every `every_s` seconds."""

    def __init__(self, paths: Sequence[Path], every_s: float = CHECKPOINT_EVERY_S) -> None:
        self.paths = list(paths)
        self.every_s = every_s
        self._locks = {path: WriteLock(lock_path(path)) for path in self.paths}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def checkpoint_once(self, conns: dict[Path, sqlite3.Connection]) -> None:
        """Checkpoint each file that exists (a file appears with its first use).

        First a passive checkpoint alongside the writers, which copies nearly everything; then a
        second one holding the write lock, which copies the few pages committed meanwhile. Only
        a WAL copied completely with no commit after it is started over by the next writer;
        without that moment it would grow for as long as deliveries keep coming.
        """
        for path in self.paths:
            if path not in conns:
                if not path.exists():
                    continue
                conns[path] = sqlite3.connect(path, isolation_level=None, timeout=5.0)
            conn = conns[path]
            conn.execute("pragma wal_checkpoint(passive)")
            with self._locks[path].held():
                busy, wal_pages, copied = conn.execute("pragma wal_checkpoint(passive)").fetchone()
            log.debug("checkpoint %s: busy=%s wal=%s copied=%s", path.name, busy, wal_pages, copied)

    def _run(self) -> None:
        conns: dict[Path, sqlite3.Connection] = {}
        try:
            while not self._stop.wait(self.every_s):
                try:
                    self.checkpoint_once(conns)
                except Exception as exc:  # next time; commits checkpoint at the backstop
                    log.warning("WAL checkpoint failed: %s", exc)
        finally:
            for conn in conns.values():
                conn.close()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="flagbot-checkpoint", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)


class Connections:
    """One connection to `path` per thread and per process: a connection must never cross a
    thread nor a fork (gunicorn's workers are forked). `setup` runs on each new one."""

    def __init__(self, path: Path, *, timeout_s: float = 30.0,
                 setup: Callable[[sqlite3.Connection], None] | None = None) -> None:
        self.path = path
        self.timeout_s = timeout_s
        self.setup = setup
        self._local = threading.local()

    def get(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None or getattr(self._local, "pid", None) != os.getpid():
            conn = sqlite3.connect(self.path, timeout=self.timeout_s, isolation_level=None)
            if self.setup is not None:
                self.setup(conn)
            self._local.conn, self._local.pid = conn, os.getpid()
        return conn


def open_wal(path: Path, schema: str, *, timeout_s: float = 30.0) -> Connections:
    """A small state file of its own (the feed's label log, rate windows, the dashboard's
    runs): its folder made, WAL mode, the schema applied; connections per thread."""
    path.parent.mkdir(parents=True, exist_ok=True)
    connections = Connections(path, timeout_s=timeout_s)
    conn = connections.get()
    conn.execute("pragma journal_mode=wal")
    conn.executescript(schema)
    return connections


@contextmanager
def immediate(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A transaction that takes SQLite's write lock up front; rolled back on any exception."""
    conn.execute("begin immediate")
    try:
        yield conn
    except BaseException:
        conn.execute("rollback")
        raise
    conn.execute("commit")

