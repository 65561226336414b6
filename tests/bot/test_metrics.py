"""flagbot.bot.monitoring.metrics and GET /metrics: counters by label, state read from the queue and ledger."""

# ruff: noqa: F811  (fixtures imported from tests/bot/core_support.py, then used as arguments)

from __future__ import annotations

import re

import requests

from flagbot.bot.monitoring import metrics
from tests.bot.core_support import UNHANDLED, payload, post, server, settings  # noqa: F401


def sample(text: str, name: str, **labels: str) -> float:
    """The value of one sample in Prometheus text, 0 when absent."""
    want = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in text.splitlines():
        m = re.match(r"^(\w+)(?:\{(.*)\})? (\S+)$", line)
        if m and m.group(1) == name and ",".join(sorted((m.group(2) or "").split(","))) == want:
            return float(m.group(3))
    return 0.0


def scrape(url: str) -> str:
    r = requests.get(url + "/metrics", timeout=5)
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/plain")
    return r.text


def test_deliveries_are_counted_by_event_and_outcome(server) -> None:
    before = scrape(server.url)
    post(server.url, payload())
    post(server.url, payload(), event=UNHANDLED)
    post(server.url, payload(), secret="wrong")
    after = scrape(server.url)
    for event, outcome in [("pull_request", "queued"), (UNHANDLED, "dropped"),
                           ("unknown", "bad_signature")]:
        name, labels = "flagbot_deliveries_total", {"event": event, "outcome": outcome}
        assert sample(after, name, **labels) - sample(before, name, **labels) == 1


def test_queue_depth_and_ledger_rows_come_from_the_shared_state(server) -> None:
    post(server.url, payload())
    post(server.url, payload())
    text = scrape(server.url)
    assert sample(text, "flagbot_queue_depth") == 2
    assert sample(text, "flagbot_ledger_deliveries", status="queued") == 2


def test_github_calls_retries_and_handler_latency_are_exposed(server) -> None:
    before = scrape(server.url)
    metrics.github_call("post", 201)
    metrics.github_retry("secondary_rate_limit")
    metrics.handler_latency("pull_request", 0.3)
    after = scrape(server.url)
    calls = {"method": "POST", "status": "201"}
    assert sample(after, "flagbot_github_calls_total", **calls) - sample(
        before, "flagbot_github_calls_total", **calls) == 1
    assert sample(after, "flagbot_github_retries_total", reason="secondary_rate_limit") - sample(
        before, "flagbot_github_retries_total", reason="secondary_rate_limit") == 1
    count = "flagbot_handler_seconds_count"
    assert sample(after, count, event="pull_request") - sample(before, count,
                                                               event="pull_request") == 1


def test_a_scrape_still_answers_when_the_queue_is_unreadable() -> None:
    def broken() -> int:
        raise OSError("disk gone")

    text = metrics.render(metrics.StateCollector(broken, dict)).decode()
    assert "flagbot_deliveries_total" in text or "flagbot_deliveries" in text
    assert "flagbot_queue_depth" not in text
