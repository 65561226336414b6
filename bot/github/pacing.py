"""Write pacing towards GitHub: a token bucket per installation (`GitHubApp.bucket` keeps them).

GitHub's REST guidance asks integrations to space content-creating requests (about one per
second) and caps them per minute; a fixed 1 s gap before every write made a single new PR wait
4-6 s for its labels, check runs and comment. A bucket lets one PR's handful of writes go out at
once and still holds a busy installation to `1 / spacing` writes per second (60/min, under the
80/min secondary limit).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class WriteBucket:
    """`acquire()` blocks until a write may go out: `burst` at once, then one per `spacing_s`."""

    def __init__(self, burst: int, spacing_s: float,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.burst = max(1, burst)
        self.spacing_s = spacing_s
        self._clock = clock
        self._sleep = sleep
        self._tokens = float(self.burst)
        self._stamp = clock()
        self._lock = threading.Lock()

    def _reserve(self) -> float:
        """Take a token (possibly going into debt); return how long the caller must wait."""
        with self._lock:
            now = self._clock()
            if self.spacing_s > 0:
                self._tokens = min(self.burst, self._tokens + (now - self._stamp) / self.spacing_s)
            else:
                self._tokens = float(self.burst)
            self._stamp = now
            self._tokens -= 1
            return max(0.0, -self._tokens * self.spacing_s)

    def spare(self) -> float:
        """Writes that could go out now without waiting (nothing is taken)."""
        with self._lock:
            if self.spacing_s <= 0:
                return float(self.burst)
            return min(self.burst, self._tokens + (self._clock() - self._stamp) / self.spacing_s)

    def acquire(self) -> float:
        """Wait for this write's turn; returns the seconds waited."""
        wait = self._reserve()
        if wait > 0:
            self._sleep(wait)
        return wait
