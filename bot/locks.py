"""`repo_lock`: one repository's work at a time, across threads, processes and (Redis) hosts."""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager as ContextManager
from contextlib import contextmanager

from flagbot.bot.settings import Settings

POLL_S = 0.05
REDIS_TTL_S = 60.0  # a dead holder's lock frees itself after this; a live one renews it

_held = threading.local()  # names this thread holds: the worker and a handler may both ask


class LockTimeout(RuntimeError):
    """The lock was not free within the timeout."""


def lock_file_name(full_name: str) -> str:
    """A safe, unique file name for `owner/name` (readable part + hash against collisions)."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", full_name)[:80]
    digest = hashlib.sha256(full_name.encode()).hexdigest()[:12]
    return f"{safe}-{digest}.lock"


def repo_lock(settings: Settings, full_name: str, timeout_s: float = 600) -> ContextManager[None]:
    """Hold the lock of repository `full_name`; raise LockTimeout after `timeout_s` of waiting."""
    return _reentrant(settings, full_name, timeout_s)


@contextmanager
def _reentrant(settings: Settings, full_name: str, timeout_s: float) -> Iterator[None]:
    names: set[str] = _held.__dict__.setdefault("names", set())
    if full_name in names:  # the worker already holds it around this thread's handler
        yield
        return
    inner = _redis_lock if settings.redis_url else _file_lock
    with inner(settings, full_name, timeout_s):
        names.add(full_name)
        try:
            yield
        finally:
            names.discard(full_name)


@contextmanager
def _file_lock(settings: Settings, full_name: str, timeout_s: float) -> Iterator[None]:
    folder = settings.state_dir / "locks"
    path = folder / lock_file_name(full_name)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except FileNotFoundError:  # first lock in this state dir: make the folder (not every time)
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                # flock dies with the process, so a SIGKILLed worker never leaves it held
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LockTimeout(f"repository {full_name}: lock busy for {timeout_s:.0f}s "
                                      f"({folder}); another worker still runs its job") from None
                time.sleep(POLL_S)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


@contextmanager
def _redis_lock(settings: Settings, full_name: str, timeout_s: float) -> Iterator[None]:
    import redis

    client = redis.Redis.from_url(settings.redis_url or "")
    lock = client.lock(f"flagbot:lock:repo:{full_name}", timeout=REDIS_TTL_S,
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
        client.close()
