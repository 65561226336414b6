"""The worker: runs queued deliveries through the handlers and keeps the ledger true.

Each task claims its ledger row (atomically, with a lease), holds the repository's lock, runs
the handlers (`bot/handlers/`, or whatever `Handlers` it was built with), then marks the row
done, or failed with a retry after a back-off. A heartbeat keeps
the leases of running rows fresh; a sweep (at start and every lease period) queues rows whose
worker died (lease expired) or whose queue message was lost, so no delivery is left behind.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import uuid
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Protocol

from huey.consumer import Consumer

from flagbot.bot.chores.drift import DriftSchedule, start_schedule
from flagbot.bot.chores.reconcile import Reconciler, start_reconciler
from flagbot.bot.handlers.deferred import Deferred
from flagbot.bot.locks import RepoLocks
from flagbot.bot.monitoring import logs, metrics
from flagbot.bot.settings import Settings
from flagbot.bot.store import MAX_TRIES, Delivery, Ledger
from flagbot.bot.store.factory import open_ledger, open_queue

log = logging.getLogger(__name__)

LEASE_S = 60.0
RETRY_DELAYS_S = (5.0, 30.0)  # after the 1st and the 2nd failed try; then failed until redelivered
QUEUED_GRACE_S = 600.0
LOCK_TIMEOUT_S = 600.0


class Handlers(Protocol):
    """What the worker runs: the bot's handlers (`handlers.BotHandlers`), or a test's fakes."""

    def run(self, delivery_id: str, event: str, payload: dict[str, Any]) -> dict[str, Any]: ...


def lock_key(repo: str, payload: dict[str, Any]) -> str:
    """What a delivery's lock guards: its pull request or issue (`owner/name#N`), else the
    repository's other deliveries (`owner/name#events`); never the repository's own lock,
    which the git work takes inside."""
    for holder in (payload.get("pull_request"), payload.get("issue"), payload):
        number = holder.get("number") if isinstance(holder, dict) else None
        if isinstance(number, int) and not isinstance(number, bool):
            return f"{repo}#{number}"
    return f"{repo}#events"


def run_locked(locks: RepoLocks, handlers: Handlers, delivery_id: str, event: str,
               payload: dict[str, Any], repo: str | None) -> dict[str, Any]:
    """Run the handlers of one delivery under its pull request's lock (the one place it is
    taken): one PR's deliveries one at a time, so no two race on its sticky comment. The git
    work takes the repository's own lock inside (`workspace.GitWorkspace`), only while it
    lasts, so no repository lock is held across paced GitHub writes."""
    lock: AbstractContextManager[None] = nullcontext()
    if repo:
        lock = locks.hold(lock_key(repo, payload), timeout_s=LOCK_TIMEOUT_S)
    with lock:
        result = handlers.run(delivery_id, event, payload)
    return result if isinstance(result, dict) else {"result": result}


class QuietConsumer(Consumer):  # type: ignore[misc]
    """Huey's consumer without its own signal handlers: serve/worker own the process signals.

    `_set_signal_handlers` is private to Huey; tests/bot/test_worker.py pins its shape and that
    `Consumer.start` calls it, and pyproject.toml pins the Huey versions this was tested with.
    """

    def _set_signal_handlers(self) -> None:
        pass


class Worker:
    """Executes `process_delivery` tasks for one process (any number of threads)."""

    def __init__(self, settings: Settings, handlers: Handlers, *, threads: int | None = None,
                 lease_s: float = LEASE_S,
                 retry_delays_s: tuple[float, ...] = RETRY_DELAYS_S) -> None:
        self.settings = settings
        self.handlers = handlers
        self.locks = RepoLocks(settings)
        self.ledger: Ledger = open_ledger(settings)
        self.queue = open_queue(settings, self.process)
        self.threads = threads or settings.worker_threads
        self.lease_s = lease_s
        self.retry_delays_s = retry_delays_s
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self._active: set[str] = set()
        self._active_lock = threading.Lock()
        self._stop = threading.Event()
        self._consumer: QuietConsumer | None = None
        self._keeper: threading.Thread | None = None
        self._reconciler: Reconciler | None = None
        self._drift: DriftSchedule | None = None
        # when this worker last took a delivery or saw the queue empty (its /healthz beacon)
        self._progress = time.time()

    def process(self, delivery_id: str) -> None:
        """The body of the `process_delivery` task."""
        row = self.ledger.claim(delivery_id, self.owner, self.lease_s)
        if row is None:  # done, running elsewhere, or a duplicate message: nothing to do
            log.debug("delivery %s: not claimable, skipped", delivery_id)
            return
        self._progress = time.time()
        with self._active_lock:
            self._active.add(row.id)
        payload = row.payload_json()
        with logs.delivery_context(row.id, row.event, row.repo, logs.pr_number(payload)):
            self._process(row, payload)

    def _process(self, row: Delivery, payload: dict[str, Any]) -> None:
        started = time.monotonic()
        try:
            result = self._run(row, payload)
            # before the row is done: a crash in between runs the idempotent handlers again
            self.schedule_follow_ups(result)
        except Deferred as later:
            if self.ledger.release(row.id, self.owner, f"deferred: {later}"):
                self.queue.schedule(row.id, later.delay_s)
                log.info("delivery %s (%s): deferred %.0fs: %s", row.id, row.event,
                         later.delay_s, later)
        except Exception as exc:
            self._failed(row, exc)
        else:
            if self.ledger.finish(row.id, self.owner, json.dumps(result, default=str)):
                metrics.delivery(row.event, "done")
                log.info("delivery %s (%s): done in %.2fs", row.id, row.event,
                         time.monotonic() - started, extra={
                             "duration_s": round(time.monotonic() - started, 3),
                             "outcome": "done", "attempt": row.attempts})
            else:
                log.warning("delivery %s: lease was taken over or the worker stopped; its result "
                            "is not recorded (the handlers are idempotent)", row.id)
        finally:
            metrics.handler_latency(row.event, time.monotonic() - started)
            with self._active_lock:
                self._active.discard(row.id)

    def schedule_follow_ups(self, result: dict[str, Any]) -> None:
        """Record the deliveries the handlers asked for later (a kernel check's deadline) in the
        ledger and queue each after its delay; one already recorded is left as it is."""
        for follow in result.get("follow_ups") or []:
            payload = follow["payload"]
            recorded = self.ledger.record(
                delivery_id=str(follow["id"]), event=str(follow["event"]),
                action=payload.get("action"), repo=(payload.get("repository") or {}).get("full_name"),
                payload=json.dumps(payload).encode(), wanted=True)
            if recorded.enqueue:
                self.queue.schedule(str(follow["id"]), float(follow["delay_s"]))

    def _run(self, row: Delivery, payload: dict[str, Any]) -> dict[str, Any]:
        return run_locked(self.locks, self.handlers, row.id, row.event, payload, row.repo)

    def _failed(self, row: Delivery, exc: Exception) -> None:
        error = f"{type(exc).__name__}: {exc}"[:4000]
        # `permanent` (e.g. sandbox.LimitExceeded): the same input fails the same way again
        if row.tries_left > 0 and not getattr(exc, "permanent", False):
            step = min(MAX_TRIES - row.tries_left - 1, len(self.retry_delays_s) - 1)
            delay = self.retry_delays_s[max(step, 0)]
            self.ledger.fail(row.id, self.owner, error, retry_at=time.time() + delay)
            self.queue.schedule(row.id, delay)
            metrics.delivery(row.event, "retried")
            log.warning("delivery %s (%s): try %d failed (%s); retry in %.1fs",
                        row.id, row.event, row.attempts, error, delay)
        else:
            self.ledger.fail(row.id, self.owner, error, retry_at=None)
            metrics.delivery(row.event, "failed")
            log.error("delivery %s (%s): failed after %d tries: %s; it runs again when "
                      "GitHub redelivers it", row.id, row.event, row.attempts, error)

    def sweep(self) -> int:
        """Queue again the rows a dead worker left (expired lease) or whose message was lost;
        a row whose worker died during its last try is failed instead (a delivery that kills
        its process is not run forever)."""
        for delivery_id, event in self.ledger.fail_abandoned():
            metrics.delivery(event, "failed")
            log.error("delivery %s (%s): failed: its worker stopped during the last try "
                      "(killed or crashed); it runs again when GitHub redelivers it",
                      delivery_id, event)
        ids = self.ledger.stale(queued_grace_s=QUEUED_GRACE_S)
        for delivery_id in ids:
            self.queue.enqueue(delivery_id)
        if ids:
            log.info("recovered %d unfinished deliveries: %s", len(ids), ", ".join(ids[:10]))
        return len(ids)

    def _housekeeping(self) -> None:
        next_sweep = time.monotonic() + self.lease_s
        while not self._stop.wait(self.lease_s / 3):
            try:
                with self._active_lock:
                    active = list(self._active)
                self.ledger.heartbeat(active, self.owner, self.lease_s)
                self._beacon()
                if self._consumer is not None:  # huey checks this only in its own main loop
                    self._consumer.check_worker_health()
                if time.monotonic() >= next_sweep:
                    next_sweep = time.monotonic() + self.lease_s
                    self.sweep()
            except Exception as exc:  # the queue or ledger may come back; keep beating
                log.warning("worker housekeeping: %s", exc)

    def _beacon(self) -> None:
        """Tell /healthz this worker is alive: it took a delivery lately, or none is waiting."""
        if self.queue.depth() == 0:
            self._progress = time.time()
        self.ledger.beacon(self.owner, self._progress)

    def start(self) -> None:
        """Recover unfinished rows, then start the consumer threads and the heartbeat."""
        self.sweep()
        self._beacon()
        self._keeper = threading.Thread(target=self._housekeeping, name="flagbot-heartbeat",
                                        daemon=True)
        self._keeper.start()
        self._consumer = QuietConsumer(self.queue.huey, workers=self.threads, worker_type="thread",
                                       periodic=False, initial_delay=0.02, max_delay=0.25,
                                       check_worker_health=False)
        self._consumer.start()
        self._reconciler = start_reconciler(self.settings, self.ledger)
        self._drift = start_schedule(self.settings)
        log.info("worker %s: %d threads on the %s queue", self.owner, self.threads,
                 "Redis" if self.settings.redis_url else "SQLite")

    def stop(self, *, graceful: bool = True, timeout_s: float | None = None) -> list[str]:
        """Stop taking tasks. With `graceful`, running ones get `timeout_s` (None: as long as they
        take) to finish; any still running then go back to the queue, their try not counted, so
        another worker runs them (the handlers are idempotent). Returns the ids put back."""
        if self._consumer is not None:
            self._consumer.shutdown_timeout = timeout_s if graceful else 0.0
            self._consumer.stop(graceful=graceful)
        self._stop.set()
        for chore in (self._reconciler, self._drift):
            if chore is not None:
                chore.stop()
        if self._keeper is not None:
            self._keeper.join(timeout=5)
        with self._active_lock:
            unfinished = sorted(self._active)
        released = [i for i in unfinished if self._release(i)]
        if released:
            log.warning("stopping: %d running deliveries put back in the queue: %s",
                        len(released), ", ".join(released))
        return released

    def _release(self, delivery_id: str) -> bool:
        try:
            if not self.ledger.release(delivery_id, self.owner, "the worker stopped during "
                                       "this try; queued again"):
                return False
            self.queue.enqueue(delivery_id)
        except Exception as exc:  # the sweep re-queues it once its lease expires
            log.error("delivery %s: could not put it back in the queue (%s); it runs again "
                      "when its lease expires", delivery_id, exc)
            return False
        return True
