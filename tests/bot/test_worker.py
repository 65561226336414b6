"""The worker: runs deliveries to done, retries with back-off, survives SIGKILL, locks repositories."""

# ruff: noqa: F811  (fixtures imported from tests/bot/core_support.py, then used as arguments)

from __future__ import annotations

import json
import multiprocessing
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from flagbot.bot.entry.web import create_app
from flagbot.bot.locks import LockTimeout, RepoLocks
from flagbot.bot.settings import Settings
from flagbot.bot.store.sqlite import SqliteLedger
from flagbot.bot.worker import Worker
from tests.bot.core_support import (  # noqa: F401  (fixtures)
    FakeHandlers,
    ServerThread,
    fake_bot_cmd,
    payload,
    post,
    server,
    settings,
    subprocess_env,
    wait_for,
)


@pytest.fixture
def worker(settings: Settings) -> Iterator[Worker]:
    w = Worker(settings, FakeHandlers(settings), threads=2, lease_s=5, retry_delays_s=(0.05, 0.1))
    w.start()
    yield w
    w.stop()


def status(settings: Settings, delivery_id: str) -> str | None:
    row = SqliteLedger(settings.state_dir / "ledger.db").get(delivery_id)
    return row.status if row else None


def settled(settings: Settings, delivery_id: str) -> bool:
    return status(settings, delivery_id) in ("done", "failed")


def test_a_delivery_runs_through_the_handler_to_done(server, settings, worker, tmp_path) -> None:
    post(server.url, payload(dir=str(tmp_path)), delivery="w-1")
    wait_for(lambda: settled(settings, "w-1"), what="w-1 done")
    row = SqliteLedger(settings.state_dir / "ledger.db").get("w-1")
    assert row.status == "done" and json.loads(row.result)["event"] == "pull_request"
    assert (tmp_path / "effects.log").read_text() == "w-1\n"


def test_a_failing_handler_is_retried_with_back_off_then_succeeds(
        server, settings, worker, tmp_path) -> None:
    post(server.url, payload(dir=str(tmp_path), fail_times=2), delivery="w-2")
    wait_for(lambda: settled(settings, "w-2"), what="w-2 settled")
    row = SqliteLedger(settings.state_dir / "ledger.db").get("w-2")
    assert row.status == "done" and row.attempts == 3


def test_a_deferred_delivery_runs_again_later_without_spending_its_tries(
        server, settings, worker, tmp_path) -> None:
    post(server.url, payload(dir=str(tmp_path), defer_times=5), delivery="w-defer")
    wait_for(lambda: settled(settings, "w-defer"), what="w-defer settled")
    row = SqliteLedger(settings.state_dir / "ledger.db").get("w-defer")
    # five deferrals and the run: more than the three tries a failing delivery gets
    assert row.status == "done" and json.loads(row.result)["tries"] == 6


def test_a_handler_failing_every_try_ends_failed_until_redelivered(
        server, settings, worker, tmp_path) -> None:
    post(server.url, payload(dir=str(tmp_path), fail_times=3), delivery="w-3")
    wait_for(lambda: settled(settings, "w-3"), what="w-3 settled")
    row = SqliteLedger(settings.state_dir / "ledger.db").get("w-3")
    assert row.status == "failed" and row.attempts == 3 and "planned failure 3" in row.error
    r = post(server.url, payload(dir=str(tmp_path), fail_times=3), delivery="w-3")
    assert r.json()["outcome"] == "requeued"
    wait_for(lambda: status(settings, "w-3") == "done", what="w-3 done after redelivery")
    assert (tmp_path / "effects.log").read_text() == "w-3\n"  # four runs, one side effect


def test_a_restarted_worker_recovers_a_delivery_whose_worker_was_sigkilled(
        server, settings, tmp_path) -> None:
    cmd = fake_bot_cmd("worker", "--lease-seconds", "1")
    env = subprocess_env(settings)
    first = subprocess.Popen(cmd, env=env, stderr=subprocess.DEVNULL)
    try:
        post(server.url, payload(dir=str(tmp_path), sleep=30, sleep_first_only=True),
             delivery="k-1")
        wait_for(lambda: (tmp_path / "k-1.effect").exists(), 30, "the job to start")
        assert status(settings, "k-1") == "running"
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(5)
    second = subprocess.Popen(cmd, env=env, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: status(settings, "k-1") == "done", timeout=15, what="k-1 done")
    finally:
        second.terminate()
        assert second.wait(10) == 0
    tries = (tmp_path / "k-1.tries").read_text().split()
    assert len(tries) == 2 and tries[0] == str(first.pid) and tries[1] == str(second.pid)
    assert (tmp_path / "effects.log").read_text() == "k-1\n"  # no duplicate side effect


def test_a_delivery_that_kills_its_worker_fails_after_its_tries_and_shows_in_metrics(
        server, settings, tmp_path) -> None:
    cmd = fake_bot_cmd("worker", "--lease-seconds", "1")
    env = subprocess_env(settings)
    post(server.url, payload(dir=str(tmp_path), kill_self=True), delivery="poison-1")
    started = 0
    while status(settings, "poison-1") != "failed" and started < 6:
        started += 1
        proc = subprocess.Popen(cmd, env=env, stderr=subprocess.DEVNULL)
        try:
            wait_for(lambda p=proc: p.poll() is not None or status(settings, "poison-1") == "failed",
                     30, "the worker to die or fail the delivery")
        finally:
            if proc.poll() is None:
                proc.terminate()
            proc.wait(10)
        time.sleep(1.1)  # the dead worker's lease runs out
    row = SqliteLedger(settings.state_dir / "ledger.db").get("poison-1")
    assert row.status == "failed" and row.attempts == 3 and "try 3 of 3" in row.error
    assert len((tmp_path / "poison-1.tries").read_text().split()) == 3 and started == 4
    metrics = requests.get(server.url + "/metrics", timeout=10).text
    assert 'flagbot_ledger_deliveries{status="failed"} 1.0' in metrics


def test_sigkill_mid_job_with_the_real_handlers_leaves_one_comment(emu, tmp_path) -> None:
    """Crash safety against the GitHub emulator: killed after the handlers wrote to GitHub,
    run again after a restart, and GitHub still shows one summary comment and one run per check."""
    from testing.bot_e2e import SECRET as E2E_SECRET
    from testing.bot_e2e import app_settings, base_files

    repo = emu.create_repo("flagos/FlagScale", files=base_files())
    emu.push_commit(repo, branch="feature", files={"torch/csrc/acc/x.cpp": "// x\n"}, message="x")
    pr = emu.open_pull(repo, head="feature", base=repo.default_branch, user="alice")
    settings = app_settings(emu, tmp_path / "state")
    body = emu.payload(event="pull_request", action="opened", repo=repo, number=pr["number"])
    body["test"] = {"dir": str(tmp_path), "real": True, "sleep": 30, "sleep_first_only": True}
    env = subprocess_env(settings, GITHUB_APP_ID=emu.app_id, GITHUB_PRIVATE_KEY=emu.private_key_pem,
                         GITHUB_API_URL=emu.url, FLAGBOT_WRITE_SPACING_S="0")
    cmd = fake_bot_cmd("worker", "--lease-seconds", "1")
    with ServerThread(create_app(settings)) as web:
        first = subprocess.Popen(cmd, env=env, stderr=subprocess.DEVNULL)
        try:
            assert post(web.url, body, delivery="kill-e2e", secret=E2E_SECRET).status_code == 202
            wait_for(lambda: (tmp_path / "kill-e2e.effect").exists(), 30, "first run's writes")
        finally:
            first.send_signal(signal.SIGKILL)
            first.wait(5)
        assert len(emu.comments(repo, pr["number"])) == 1
        second = subprocess.Popen(cmd, env=env, stderr=subprocess.DEVNULL)
        try:
            wait_for(lambda: status(settings, "kill-e2e") == "done", 30, "done after restart")
        finally:
            second.terminate()
            second.wait(10)
    assert len((tmp_path / "kill-e2e.tries").read_text().split()) == 2  # it did run twice
    assert len(emu.comments(repo, pr["number"])) == 1
    names = [r["name"] for r in emu.check_runs(repo, pr["head"]["sha"])]
    assert sorted(names) == sorted(set(names)) and len(names) == 2


def intervals(folder: Path) -> dict[str, list[tuple[float, float]]]:
    found: dict[str, list[tuple[float, float]]] = {}
    for line in (folder / "intervals.log").read_text().splitlines():
        repo, start, end = line.split()
        found.setdefault(repo, []).append((float(start), float(end)))
    return found


def overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def test_two_deliveries_for_one_repository_run_one_at_a_time(
        server, settings, worker, tmp_path) -> None:
    spec = {"dir": str(tmp_path), "sleep": 0.4, "intervals": True}
    for i, repo in enumerate(["octo/a", "octo/a", "octo/b"]):
        post(server.url, payload(repo=repo, **spec), delivery=f"l-{i}")
    wait_for(lambda: all(status(settings, f"l-{i}") == "done" for i in range(3)), what="all done")
    runs = intervals(tmp_path)
    assert not overlap(*runs["octo/a"])
    # the control: two worker threads do run in parallel, so the test above could fail
    assert any(overlap(runs["octo/b"][0], a) for a in runs["octo/a"])


def hold_lock(state_dir: str, name: str, seconds: float, log: str) -> None:
    settings = Settings(state_dir=Path(state_dir))
    with RepoLocks(settings).hold(name):
        with open(log, "a") as f:
            f.write(f"{time.time()} ")
        time.sleep(seconds)
        with open(log, "a") as f:
            f.write(f"{time.time()}\n")


def test_repo_lock_serialises_processes(tmp_path: Path) -> None:
    log = tmp_path / "log"
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=hold_lock, args=(str(tmp_path), "o/r", 0.3, str(log)))
             for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(20)
    a, b = [tuple(map(float, line.split())) for line in log.read_text().splitlines()]
    assert not overlap(a, b)


def test_repo_lock_times_out_with_a_message_naming_the_repository(tmp_path: Path) -> None:
    settings = Settings(state_dir=tmp_path)
    ctx = multiprocessing.get_context("spawn")
    holder = ctx.Process(target=hold_lock, args=(str(tmp_path), "o/busy", 1, str(tmp_path / "l")))
    holder.start()
    wait_for(lambda: (tmp_path / "l").exists(), what="the holder")
    with pytest.raises(LockTimeout, match="o/busy"):
        with RepoLocks(settings).hold("o/busy", timeout_s=0.2):
            pass
    holder.join(10)


def test_the_quiet_consumer_still_matches_the_huey_it_overrides() -> None:
    """QuietConsumer overrides Huey's private `_set_signal_handlers`: fail when Huey changes it."""
    import inspect

    from huey.consumer import Consumer

    assert list(inspect.signature(Consumer._set_signal_handlers).parameters) == ["self"]
    assert "self._set_signal_handlers()" in inspect.getsource(Consumer.start)


def test_a_started_worker_leaves_the_signal_handlers_alone(settings: Settings) -> None:
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    w = Worker(settings, FakeHandlers(settings), threads=1)
    w.start()
    try:
        assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before
    finally:
        w.stop()
