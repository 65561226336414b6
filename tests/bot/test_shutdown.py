"""SIGTERM during a job: the job finishes, or goes back to the queue with its try refunded."""

# ruff: noqa: F811  (fixtures imported from tests/bot/core_support.py, then used as arguments)

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest

from flagbot.bot.store import MAX_TRIES, Ledger
from flagbot.bot.store.redis import RedisLedger
from flagbot.bot.store.sqlite import SqliteLedger
from tests.bot.core_support import (  # noqa: F401  (fixtures)
    fake_bot_cmd,
    payload,
    post,
    redis_server,
    redis_url,
    server,
    settings,
    subprocess_env,
    wait_for,
)


def row(settings, delivery_id):
    return SqliteLedger(settings.state_dir / "ledger.db").get(delivery_id)


def start_worker(settings, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(fake_bot_cmd("worker", "--log-format", "json", *args),
                            env=subprocess_env(settings), stderr=subprocess.PIPE, text=True)


def test_sigterm_mid_job_puts_it_back_and_the_next_worker_finishes_it(server, settings, tmp_path) -> None:
    first = start_worker(settings, "--stop-timeout", "0.5")
    post(server.url, payload(dir=str(tmp_path), sleep=30, sleep_first_only=True), delivery="t-1")
    wait_for(lambda: (tmp_path / "t-1.effect").exists(), 30, "the job to start")
    first.send_signal(signal.SIGTERM)
    _, err = first.communicate(timeout=20)
    assert first.returncode == 0, err
    back = row(settings, "t-1")
    assert back.status == "queued" and back.tries_left == MAX_TRIES and "stopped" in back.error
    lines = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    assert any("put back in the queue" in line["message"] and "t-1" in line["message"] for line in lines)
    second = start_worker(settings)
    try:
        wait_for(lambda: row(settings, "t-1").status == "done", 20, "t-1 done by the next worker")
    finally:
        second.terminate()
        assert second.wait(20) == 0
    assert len((tmp_path / "t-1.tries").read_text().split()) == 2
    assert (tmp_path / "effects.log").read_text() == "t-1\n"


def test_sigterm_lets_a_short_job_finish_first(server, settings, tmp_path) -> None:
    worker = start_worker(settings, "--stop-timeout", "30")
    post(server.url, payload(dir=str(tmp_path), sleep=2), delivery="t-2")
    wait_for(lambda: (tmp_path / "t-2.effect").exists(), 30, "the job to start")
    worker.send_signal(signal.SIGTERM)
    _, err = worker.communicate(timeout=40)
    assert worker.returncode == 0, err
    assert row(settings, "t-2").status == "done"
    assert len((tmp_path / "t-2.tries").read_text().split()) == 1


@pytest.fixture(params=["sqlite", "redis"])
def led(request: pytest.FixtureRequest, tmp_path: Path) -> Ledger:
    if request.param == "sqlite":
        return SqliteLedger(tmp_path / "ledger.db")
    return RedisLedger(request.getfixturevalue("redis_url"))


def test_release_requeues_only_the_owners_running_row_and_refunds_its_try(led: Ledger) -> None:
    led.record(delivery_id="r-1", event="pull_request", action="opened", repo="o/r",
               payload=b"{}", wanted=True)
    assert led.claim("r-1", "w1", 60) is not None
    assert not led.release("r-1", "someone-else", "x")
    assert led.release("r-1", "w1", "the worker stopped")
    back = led.get("r-1")
    assert back.status == "queued" and back.tries_left == MAX_TRIES and back.owner is None
    assert led.counts()["queued"] == 1 and led.counts()["running"] == 0
    assert led.claim("r-1", "w2", 60) is not None
    assert not led.release("r-1", "w1", "stale owner")


def test_beacons_keep_each_workers_last_progress(led: Ledger) -> None:
    led.beacon("w1", 100.0)
    led.beacon("w1", 1e12)
    led.beacon("w2", 2e12)
    assert led.beacons() == {"w1": 1e12, "w2": 2e12}
