"""`Deferred`: what a handler raises to step aside for other work (the worker, not a retry)."""

from __future__ import annotations


class Deferred(Exception):
    """Run this delivery again after `delay_s`, its try not counted: it yields to other work."""

    permanent = False

    def __init__(self, reason: str, delay_s: float) -> None:
        super().__init__(reason)
        self.delay_s = delay_s
