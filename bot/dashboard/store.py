"""What the dashboard keeps beyond the ledger: device kernel-check runs and their kernel results.

The bot writes a run when it starts one and when it ends it (`dashboard/record.py`), and one
result per op of every report it ingests. Both are bounded: the newest `MAX_RUNS` runs and
`MAX_RESULTS` results are kept, older ones are dropped on write, so the store never grows with
the bot's age. Two implementations, picked like the ledger: `dashboard/store_sqlite.py`
(`<state dir>/dashboard.db`) and `dashboard/store_redis.py` (with `FLAGBOT_REDIS_URL`);
`dashboard/factory.py` opens the one the settings name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

MAX_RUNS = 5_000
MAX_RESULTS = 50_000
# the check run's states as GitHub names them; `conclusion` is GitHub's once completed
STATUSES = ("queued", "in_progress", "completed")


@dataclass(frozen=True)
class DeviceRun:
    """One kernel-check request: a (PR, head sha, device) the bot ran or dispatched."""

    request: str
    repo: str
    pr: int
    sha: str
    device: str
    status: str
    conclusion: str | None
    queued_at: float
    started_at: float | None = None
    finished_at: float | None = None
    run_id: int | None = None
    url: str | None = None
    retries: int = 0  # earlier requests for the same (repo, PR, head sha, device)


@dataclass(frozen=True)
class KernelResult:
    """One op's measurement in one ingested report."""

    repo: str
    pr: int
    sha: str
    device: str
    op: str
    kind: str  # override | new | unknown
    verdict: str
    vs_baseline: float | None  # the median speed ratio an override was gated on
    vs_native: float | None  # the ratio of a new op to the native (torch) one
    accuracy: float | None  # passed / cases, None when no case ran
    at: float


@dataclass(frozen=True)
class RunFilter:
    """Which runs a listing shows (None: any)."""

    device: str | None = None
    repo: str | None = None


class DashStore(Protocol):
    """What the recorder writes and the dashboard reads."""

    def run_started(self, run: DeviceRun) -> None: ...
    def run_moved(self, request: str, *, status: str, at: float, conclusion: str | None = None,
                  run_id: int | None = None, url: str | None = None) -> None: ...
    def add_results(self, results: list[KernelResult]) -> None: ...
    def runs(self, where: RunFilter, *, limit: int, offset: int = 0) -> list[DeviceRun]: ...
    def run_facets(self) -> tuple[list[str], list[str]]: ...
    def results(self, *, device: str | None = None, limit: int = 2_000) -> list[KernelResult]: ...

