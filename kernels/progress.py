"""Progress of a long check on stderr: one line per op, and per case while the run is slow,
with an estimate of the time left. Work is weighted by elements, so a 4096x4096 case counts
for more than a 4x33 one."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

# A case's weight is its element count plus this, so tiny cases are not free.
BASE_WEIGHT = 4096
# Per-case lines only once this many seconds have passed since the last line.
CASE_INTERVAL_S = 5.0
# Triton's CPU interpreter: elements a second one accuracy case gets through, all ops alike
# (about one program of ~1024 elements a millisecond, on a 2-core VM).
INTERPRETER_ELEMENTS_PER_S = 1e6


def duration(seconds: float) -> str:
    """`45 s`, `3 min`, `1.5 h`."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class Progress:
    """Counts weighted work done against the total and reports on `stream`."""

    def __init__(self, total: float, stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total = max(total, 1.0)
        self.done = 0.0
        self.stream = stream if stream is not None else sys.stderr
        self.clock = clock
        self.start = clock()
        self.last = self.start

    def _left(self) -> str:
        elapsed = self.clock() - self.start
        if self.done <= 0 or elapsed < 1:
            return ""
        left = elapsed / self.done * (self.total - self.done)
        return f"; about {duration(left)} left"

    def op(self, index: int, count: int, name: str, cases: int, skip: str | None = None) -> None:
        """An op starts (`skip`: the status of one that is only listed)."""
        what = skip or f"{cases} accuracy cases{self._left()}"
        self._say(f"[{index}/{count}] {name}: {what}")

    def case(self, name: str, label: str, weight: float) -> None:
        """A case finished; said only when the last line is CASE_INTERVAL_S old."""
        self.done += weight
        if self.clock() - self.last >= CASE_INTERVAL_S:
            share = 100 * self.done / self.total
            self._say(f"      {name} {label} done ({share:.0f}% of the run{self._left()})")

    def _say(self, text: str) -> None:
        self.last = self.clock()
        print(text, file=self.stream, flush=True)
