"""The queue: Huey, with one task, `process_delivery(delivery_id)`.

The message carries only the id; the ledger holds the payload, and the worker looks the handler
up (no per-event task copies). The Huey instance comes from the store in use (`store/factory.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from huey import Huey

TASK_NAME = "process_delivery"
QUEUE_NAME = "flagbot"


def _not_in_this_process(delivery_id: str) -> None:
    raise RuntimeError(f"delivery {delivery_id}: this process only enqueues; run a worker")


def task_body(process: Callable[[str], None]) -> Callable[[str], None]:
    """Wrap `process` so the task has the same name in every process."""

    def process_delivery(delivery_id: str) -> None:
        process(delivery_id)

    return process_delivery


class DeliveryQueue:
    """Enqueue side (ingest) and, given `process`, the executing side (the worker)."""

    def __init__(self, huey: Huey, process: Callable[[str], None] | None = None) -> None:
        self.huey = huey
        self.task: Any = huey.task(name=TASK_NAME)(task_body(process or _not_in_this_process))

    def enqueue(self, delivery_id: str) -> None:
        """Queue one run of `process_delivery(delivery_id)`."""
        self.task(delivery_id)

    def schedule(self, delivery_id: str, delay_s: float) -> None:
        """Queue a run after `delay_s` seconds (retries with back-off)."""
        self.task.schedule((delivery_id,), delay=delay_s)

    def depth(self) -> int:
        """Tasks waiting (queued now, not counting scheduled retries)."""
        return int(self.huey.pending_count())
