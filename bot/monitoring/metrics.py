"""Prometheus metrics: deliveries by event and outcome, queue depth, handler latency, GitHub calls.

Counters and histograms live in `prometheus_client`'s default registry. Under `flagbot serve`
several processes (gunicorn workers, the queue consumer) count, so serve points
`PROMETHEUS_MULTIPROC_DIR` (prometheus_client's own variable, read by it at import) at
`<state_dir>/metrics` and /metrics sums the processes' files (`Settings.metrics_dir`). Gauges that describe shared state (queue depth, ledger rows
per status) are read from the queue and the ledger at scrape time, so every process agrees.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import REGISTRY, Collector

log = logging.getLogger(__name__)

DELIVERIES = Counter("flagbot_deliveries", "Webhook deliveries by event and outcome",
                     ["event", "outcome"])
HANDLER_SECONDS = Histogram("flagbot_handler_seconds", "Time to run all handlers of a delivery",
                            ["event"], buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300))
GITHUB_CALLS = Counter("flagbot_github_calls", "GitHub API calls by method and status",
                       ["method", "status"])
GITHUB_RETRIES = Counter("flagbot_github_retries", "GitHub API calls retried, by reason",
                         ["reason"])
# device runners: labelled by device only (the configured names, bounded by the config's limits)
RUNNER_BUCKETS = (10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400, 43200, 86400)
DEVICE_QUEUED = Histogram("flagbot_device_queued_seconds",
                          "Kernel-check runs: dispatch (or tag push) until a runner took the job",
                          ["device"], buckets=RUNNER_BUCKETS)
DEVICE_RUNNING = Histogram("flagbot_device_running_seconds",
                           "Kernel-check runs: a runner took the job until the run completed",
                           ["device"], buckets=RUNNER_BUCKETS)
DEVICE_RETRIES = Counter("flagbot_device_retries", "Kernel-check runs dispatched again after a "
                         "runner ended one without a report", ["device"])
DEVICE_TIMEOUTS = Counter("flagbot_device_timeouts", "Kernel-check runs that timed out (the "
                          "runner's job timeout, or no report within timeout_minutes)", ["device"])
RECONCILED = Counter("flagbot_reconciled", "Delivery-log reconciliation: redeliveries asked for "
                     "(redelivered_missing, redelivered_failed) and entries skipped, by reason",
                     ["outcome"])
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def delivery(event: str, outcome: str) -> None:
    """Count one delivery outcome (ingest: accepted, dropped, ...; worker: done, failed, ...)."""
    DELIVERIES.labels(event=event, outcome=outcome).inc()


def github_call(method: str, status: int) -> None:
    """Count one GitHub API call (the retry policy sees every response and calls this)."""
    GITHUB_CALLS.labels(method=method.upper(), status=str(status)).inc()


def github_retry(reason: str) -> None:
    """Count one retried GitHub call: reason is 5xx, secondary_rate_limit or primary_rate_limit."""
    GITHUB_RETRIES.labels(reason=reason).inc()


def device_queued(device: str, seconds: float) -> None:
    DEVICE_QUEUED.labels(device=device).observe(max(seconds, 0.0))


def device_running(device: str, seconds: float) -> None:
    DEVICE_RUNNING.labels(device=device).observe(max(seconds, 0.0))


def device_retry(device: str) -> None:
    DEVICE_RETRIES.labels(device=device).inc()


def device_timeout(device: str) -> None:
    DEVICE_TIMEOUTS.labels(device=device).inc()


def reconciled(outcome: str) -> None:
    """Count one reconciliation decision (bot/chores/reconcile.py)."""
    RECONCILED.labels(outcome=outcome).inc()


def handler_latency(event: str, seconds: float) -> None:
    """Observe how long the handlers of one delivery took."""
    HANDLER_SECONDS.labels(event=event).observe(seconds)


class StateCollector(Collector):
    """Reads queue depth and ledger rows per status when Prometheus scrapes."""

    def __init__(self, depth: Callable[[], int], counts: Callable[[], dict[str, int]]) -> None:
        self.depth = depth
        self.counts = counts

    def collect(self) -> Iterator[Metric]:
        try:
            depth = GaugeMetricFamily("flagbot_queue_depth", "Tasks waiting in the queue")
            depth.add_metric([], self.depth())
            rows = GaugeMetricFamily("flagbot_ledger_deliveries", "Ledger rows by status",
                                     labels=["status"])
            for status, n in self.counts().items():
                rows.add_metric([status], n)
        except Exception as exc:  # a scrape must not fail because the queue is down; healthz says so
            log.warning("metrics: queue or ledger unreadable: %s", exc)
            return
        yield depth
        yield rows


def render(state: StateCollector | None = None, *, multiproc_dir: Path | None = None) -> bytes:
    """The text exposition for /metrics: this process's counters, or with `multiproc_dir` those
    of every process writing there, plus the shared state."""
    registry = CollectorRegistry()
    if multiproc_dir is not None and multiproc_dir.is_dir():
        from prometheus_client import multiprocess

        multiprocess.MultiProcessCollector(registry, str(multiproc_dir))  # type: ignore[no-untyped-call]
        out = generate_latest(registry)
    else:
        out = generate_latest(REGISTRY)
    if state is not None:
        extra = CollectorRegistry()
        extra.register(state)
        out += generate_latest(extra)
    return out
