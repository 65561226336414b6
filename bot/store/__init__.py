"""Durable state, behind one small interface: the delivery ledger and the queue.

The ledger has one row per `X-GitHub-Delivery` and is the source of truth for what was done; the
queue carries only delivery ids to the worker. A row moves queued -> running -> done | failed
(| queued again for a retry or a redelivery); events nobody handles are kept as `dropped`. It is
`done` only after its handlers returned, so a redelivery of anything else runs again and a
crashed worker's row is picked up by the next sweep.

Two implementations keep these rules: SQLite files under `FLAGBOT_STATE_DIR` (`store/sqlite.py`,
one host, the default) and Redis (`store/redis.py`, when `FLAGBOT_REDIS_URL` is set, so workers
on several hosts share it). `store/factory.py` picks one from the settings; the queue is Huey on
either (`store/queue.py`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

STATUSES = ("queued", "running", "done", "failed", "dropped")
# a worker's beacon older than this is forgotten (the worker is long gone)
BEACON_TTL_S = 86400.0
# handler runs per (re)delivery: the first try plus two retries with back-off
# handler runs per (re)delivery: the first try plus two retries with back-off. A try counts when
# it starts, so a delivery whose process dies (SIGKILL, out of memory) uses up its tries too.
MAX_TRIES = 3
# deliveries `Ledger.recent` can page through on Redis (SQLite lists every row it holds)
RECENT_MAX = 10_000


def abandoned_error(attempts: int | str) -> str:
    """The ledger's error for a delivery whose last try's worker died (its lease expired)."""
    return (f"the worker running try {attempts} of {MAX_TRIES} stopped without finishing "
            "(killed or crashed; its lease expired); no tries left")


@dataclass(frozen=True)
class Delivery:
    """One ledger row."""

    id: str
    event: str
    action: str | None
    repo: str | None
    payload: bytes
    status: str
    attempts: int
    tries_left: int
    error: str | None
    received_at: float
    updated_at: float
    finished_at: float | None
    redeliveries: int
    owner: str | None = None
    lease_until: float | None = None
    result: str | None = None

    def payload_json(self) -> dict[str, Any]:
        """The webhook payload as parsed JSON."""
        data: dict[str, Any] = json.loads(self.payload)
        return data


@dataclass(frozen=True)
class Recorded:
    """What ingest did with a delivery: `outcome` names it, `enqueue` says whether to queue it."""

    outcome: str  # queued | requeued | done_already | running | dropped
    enqueue: bool
    note: str = ""


class Ledger(Protocol):
    """The ledger operations every store provides."""

    def record(self, *, delivery_id: str, event: str, action: str | None, repo: str | None,
               payload: bytes, wanted: bool) -> Recorded: ...
    def claim(self, delivery_id: str, owner: str, lease_s: float) -> Delivery | None: ...
    def finish(self, delivery_id: str, owner: str, result: str) -> bool: ...
    def fail(self, delivery_id: str, owner: str, error: str, *, retry_at: float | None) -> bool: ...
    def heartbeat(self, ids: Iterable[str], owner: str, lease_s: float) -> None: ...
    def stale(self, *, queued_grace_s: float) -> list[str]: ...
    def fail_abandoned(self) -> list[tuple[str, str]]: ...
    def get(self, delivery_id: str) -> Delivery | None: ...
    def counts(self) -> dict[str, int]: ...
    def check_writable(self) -> None: ...
    def release(self, delivery_id: str, owner: str, reason: str) -> bool: ...
    def beacon(self, name: str, at: float) -> None: ...
    def beacons(self) -> dict[str, float]: ...
    def recent(self, *, limit: int, offset: int = 0) -> list[Delivery]: ...
    def oldest_waiting(self) -> float | None: ...


class Queue(Protocol):
    """The queue operations ingest and the worker use (messages carry delivery ids only)."""

    def enqueue(self, delivery_id: str) -> None: ...
    def schedule(self, delivery_id: str, delay_s: float) -> None: ...
    def depth(self) -> int: ...


def decide(status: str, lease_until: float | None, now: float, wanted: bool) -> Recorded:
    """What a delivery id seen before gets: the redelivery rules in one place."""
    if status == "done":
        return Recorded("done_already", False, "already handled; a done delivery is not run again")
    if status == "running" and lease_until is not None and lease_until > now:
        return Recorded("running", False, "being handled right now; not queued twice")
    if status == "dropped" and not wanted:
        return Recorded("dropped", False, "no handler for this event")
    return Recorded("requeued", True, f"was {status}; queued again")


def recorded_new(status: str, wanted: bool) -> Recorded:
    """What a delivery id seen for the first time gets."""
    return Recorded(status, wanted, "" if wanted else "no handler for this event")
