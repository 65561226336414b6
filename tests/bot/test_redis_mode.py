"""Redis mode against a real redis-server: ledger, queue and locks shared by workers on any host.

Each worker gets its own FLAGBOT_STATE_DIR, as on separate hosts: only Redis connects them.
"""

# ruff: noqa: F811  (fixtures imported from tests/bot/core_support.py, then used as arguments)

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from flagbot.bot.entry.web import create_app
from flagbot.bot.settings import Settings
from flagbot.bot.store.redis import RedisLedger
from tests.bot.core_support import (  # noqa: F401  (fixtures)
    ServerThread,
    fake_bot_cmd,
    make_settings,
    payload,
    post,
    redis_server,
    redis_url,
    subprocess_env,
    wait_for,
)
from tests.bot.test_metrics import sample
from tests.bot.test_worker import intervals, overlap


@pytest.fixture
def rsettings(tmp_path: Path, redis_url: str) -> Settings:
    return make_settings(tmp_path / "web", redis_url=redis_url)


@pytest.fixture
def web(rsettings: Settings) -> Iterator[ServerThread]:
    with ServerThread(create_app(rsettings)) as srv:
        yield srv


@pytest.fixture
def two_workers(rsettings: Settings, tmp_path: Path) -> Iterator[list[subprocess.Popen[bytes]]]:
    procs, logs = [], []
    for host in ("host-a", "host-b"):
        env = subprocess_env(rsettings.with_overrides(state_dir=tmp_path / host))
        cmd = fake_bot_cmd("worker", "--worker-threads", "2")
        logs.append(tmp_path / f"{host}.log")
        procs.append(subprocess.Popen(cmd, env=env, stderr=logs[-1].open("w")))
    for log in logs:  # both consumers listen before any delivery arrives
        wait_for(lambda log=log: "threads on the Redis queue" in log.read_text(), 20,
                 f"{log.name} ready")
    yield procs
    for p in procs:
        p.terminate()
    assert [p.wait(15) for p in procs] == [0, 0]


def done(led: RedisLedger, ids: list[str]) -> bool:
    return all((row := led.get(i)) is not None and row.status == "done" for i in ids)


def test_deliveries_are_recorded_in_redis_and_shared_by_workers_on_two_hosts(
        web, rsettings, two_workers, tmp_path) -> None:
    ids = [f"rd-{i}" for i in range(12)]
    for i, delivery in enumerate(ids):
        spec = {"dir": str(tmp_path), "sleep": 0.2}
        assert post(web.url, payload(repo=f"octo/r{i}", **spec), delivery=delivery).status_code == 202
    led = RedisLedger(rsettings.redis_url or "")
    wait_for(lambda: done(led, ids), 30, "all deliveries done")
    pids = {(tmp_path / f"{i}.tries").read_text().split()[0] for i in ids}
    assert pids == {str(p.pid) for p in two_workers}  # both hosts took work
    assert not (rsettings.state_dir / "ledger.db").exists()  # nothing on the web host's disk
    r = post(web.url, payload(), delivery=ids[0])
    assert r.json()["outcome"] == "done_already"
    health = requests.get(web.url + "/healthz", timeout=5).json()
    assert health["status"] == "ok" and health["checks"]["queue"] == "ok (0 waiting)"
    text = requests.get(web.url + "/metrics", timeout=5).text
    assert sample(text, "flagbot_ledger_deliveries", status="done") == len(ids)


def test_one_repository_runs_one_at_a_time_across_hosts(web, rsettings, two_workers,
                                                       tmp_path) -> None:
    spec = {"dir": str(tmp_path), "sleep": 0.4, "intervals": True}
    ids = [f"lk-{i}" for i in range(4)]
    for delivery in ids:
        post(web.url, payload(repo="octo/one", **spec), delivery=delivery)
    wait_for(lambda: done(RedisLedger(rsettings.redis_url or ""), ids), 30, "all done")
    runs = sorted(intervals(tmp_path)["octo/one"])
    assert len(runs) == 4
    assert not any(overlap(a, b) for a, b in zip(runs, runs[1:], strict=False))
    pids = {(tmp_path / f"{i}.tries").read_text().split()[0] for i in ids}
    assert len(pids) == 2  # the lock, not luck: both hosts ran some of them
