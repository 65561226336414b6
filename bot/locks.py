"""`RepoLocks`: named locks across threads, processes and (Redis) hosts.

Two takers, two kinds of name. The worker holds a pull request's lock (`owner/name#N`) around
all handlers of a delivery (`worker.run_locked`, also what `flagbot replay` uses), so two
deliveries for one pull request never both find no summary comment and both create one. The
git workspace holds the repository's lock (`owner/name`) while it fetches, checks out and the
checks run, so a repository's clone has one user at a time, and no repository lock is held
while GitHub writes are paced.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from flagbot.bot.settings import Settings

POLL_S = 0.05
REDIS_TTL_S = 60.0  # a dead holder's lock frees itself after this; a live one renews it
TIMEOUT_S = 600.0


class LockTimeout(RuntimeError):
    """The lock was not free within the timeout."""


def lock_file_name(full_name: str) -> str:
    """A safe, unique file name for `owner/name` (readable part + hash against collisions)."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", full_name)[:80]
    digest = hashlib.sha256(full_name.encode()).hexdigest()[:12]
    return f"{safe}-{digest}.lock"


class RepoLocks:
    """Per-repository locks: flock files under the state dir, or Redis locks with FLAGBOT_REDIS_URL."""

    def __init__(self, settings: Settings) -> None:
        self.folder = settings.state_dir / "locks"
        self.redis_url = settings.redis_url
        self._redis: Any = None
        self._redis_lock = threading.Lock()

    def hold(self, full_name: str, timeout_s: float = TIMEOUT_S) -> AbstractContextManager[None]:
        """Hold the lock of repository `full_name`; raise LockTimeout after `timeout_s` of waiting."""
        if self.redis_url:
            return self._redis_hold(full_name, timeout_s)
        return self._file_hold(full_name, timeout_s)

    @contextmanager
    def _file_hold(self, full_name: str, timeout_s: float) -> Iterator[None]:
        path = self.folder / lock_file_name(full_name)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except FileNotFoundError:  # first lock in this state dir: make the folder (not every time)
            self.folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            deadline = time.monotonic() + timeout_s
            while True:
                try:
                    # flock dies with the process, so a SIGKILLed worker never leaves it held
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise LockTimeout(
                            f"repository {full_name}: lock busy for {timeout_s:.0f}s "
                            f"({self.folder}); another worker still runs its job") from None
                    time.sleep(POLL_S)
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def _client(self) -> Any:
        with self._redis_lock:
            if self._redis is None:
                import redis  # redis-py only in Redis mode

                self._redis = redis.Redis.from_url(self.redis_url or "")
            return self._redis

    @contextmanager
    def _redis_hold(self, full_name: str, timeout_s: float) -> Iterator[None]:
        lock = self._client().lock(f"flagbot:lock:repo:{full_name}", timeout=REDIS_TTL_S,
                                   sleep=POLL_S, blocking_timeout=timeout_s)
        if not lock.acquire():
            raise LockTimeout(f"repository {full_name}: Redis lock busy for {timeout_s:.0f}s; "
                              "another worker still runs its job")
        stop = threading.Event()

        def renew() -> None:
            while not stop.wait(REDIS_TTL_S / 3):
                lock.reacquire()

        keeper = threading.Thread(target=renew, name=f"lock-renew {full_name}", daemon=True)
        keeper.start()
        try:
            yield
        finally:
            stop.set()
            keeper.join()
            lock.release()
