"""`flagbot serve` (real gunicorn, 2 workers, in-process consumer) and `flagbot worker` options."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from flagbot.bot.settings import Settings
from flagbot.bot.store.sqlite import SqliteLedger
from flagbot.hooks.cli import main
from tests.bot.core_support import (
    ROOT,
    fake_bot_cmd,
    free_port,
    make_settings,
    payload,
    post,
    subprocess_env,
    wait_for,
)
from tests.bot.test_metrics import sample


class Served:
    """A `flagbot serve` subprocess and its URL."""

    def __init__(self, settings: Settings, *args: str, env_extra: dict[str, str] | None = None,
                 bind: bool = True) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        extra = ["--bind", f"127.0.0.1:{self.port}"] if bind else []
        env = subprocess_env(settings, **(env_extra or {}))
        if not bind:
            env["PORT"] = str(self.port)
        self.log = settings.state_dir.parent / "serve.log"
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            fake_bot_cmd("serve", *extra, *args),
            env=env, cwd=ROOT, stdout=self.log.open("w"), stderr=subprocess.STDOUT)
        try:
            wait_for(self._up, 30, "flagbot serve to answer /healthz")
        except BaseException:
            self.stop()
            raise

    def _up(self) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError(f"flagbot serve exited:\n{self.log.read_text()}")
        try:
            return requests.get(self.url + "/healthz", timeout=1).status_code in (200, 503)
        except requests.RequestException:  # gunicorn listens before its workers have booted
            return False

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()  # serve asks Linux to TERM its gunicorn child when serve dies
            raise


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Served, Settings]]:
    settings = make_settings(tmp_path / "state")
    srv = Served(settings, "--lease-seconds", "5")
    yield srv, settings
    srv.stop()


def test_serve_runs_gunicorn_and_the_consumer_to_done(served, tmp_path: Path) -> None:
    srv, settings = served
    ids = [f"s-{i}" for i in range(20)]
    for i in ids:
        assert post(srv.url, payload(dir=str(tmp_path)), delivery=i).status_code == 202
    led = SqliteLedger(settings.state_dir / "ledger.db")
    wait_for(lambda: all(led.get(i).status == "done" for i in ids), 20, "all deliveries done")
    assert sorted((tmp_path / "effects.log").read_text().split()) == sorted(ids)
    # the counters of both gunicorn workers and of the consumer process add up on one scrape
    text = requests.get(srv.url + "/metrics", timeout=5).text
    assert sample(text, "flagbot_deliveries_total", event="pull_request", outcome="queued") == 20
    assert sample(text, "flagbot_deliveries_total", event="pull_request", outcome="done") == 20
    assert sample(text, "flagbot_ledger_deliveries", status="done") == 20


def test_serve_uses_two_gunicorn_workers(served) -> None:
    srv, _ = served
    children = subprocess.run(["pgrep", "-P", str(srv.proc.pid)], capture_output=True, text=True)
    (master,) = children.stdout.split()
    workers = subprocess.run(["pgrep", "-P", master], capture_output=True, text=True)
    assert len(workers.stdout.split()) == 2


def test_serve_runs_the_keep_alive_worker_and_background_checkpoints(served) -> None:
    srv, _ = served
    (master,) = subprocess.run(["pgrep", "-P", str(srv.proc.pid)], capture_output=True,
                               text=True).stdout.split()
    command = Path(f"/proc/{master}/cmdline").read_bytes().split(b"\0")
    assert b"flagbot.bot.entry.serving.gunicorn_worker.KeepAliveWorker" in command
    environ = Path(f"/proc/{master}/environ").read_bytes().split(b"\0")
    assert b"FLAGBOT_SQLITE_CHECKPOINTS=background" in environ


def test_serve_can_run_gunicorns_own_gthread_worker(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "state")
    srv = Served(settings, "--worker-class", "gthread")
    try:
        assert post(srv.url, payload(dir=str(tmp_path)), delivery="gt-1").status_code == 202
        led = SqliteLedger(settings.state_dir / "ledger.db")
        wait_for(lambda: led.get("gt-1").status == "done", 20, "the delivery done")
    finally:
        assert srv.stop() == 0


def test_serve_starts_on_a_fresh_machine_without_github_settings(tmp_path: Path) -> None:
    settings = Settings(state_dir=tmp_path / "fresh" / ".flagbot")  # no secret, no app id
    srv = Served(settings, bind=False)  # PORT from the environment
    try:
        health = requests.get(srv.url + "/healthz", timeout=5)
        assert health.status_code == 200 and "GITHUB_APP_ID" in health.json()["checks"]["config"]
        r = post(srv.url, payload(), secret="anything")
        assert r.status_code == 401 and "GITHUB_WEBHOOK_SECRET" in r.json()["error"]
    finally:
        assert srv.stop() == 0
    log = srv.log.read_text()
    assert "not configured: GITHUB_WEBHOOK_SECRET" in log and "GITHUB_APP_ID" in log
    # printed once by `flagbot serve`, not again by each gunicorn worker
    assert log.count("not configured: GITHUB_WEBHOOK_SECRET") == 1, log


def test_serve_exits_2_when_gunicorn_cannot_bind(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        settings = make_settings(tmp_path / "state")
        started = time.monotonic()
        done = subprocess.run(
            fake_bot_cmd("serve", "--bind", f"127.0.0.1:{port}"),
            env=subprocess_env(settings), cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "gunicorn exited" in done.stderr
    assert time.monotonic() - started < 30


def test_serve_and_worker_take_no_handlers_option(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("serve", "worker"):
        with pytest.raises(SystemExit) as exited:
            main([command, "--handlers", "tests.bot.core_support"])
        assert exited.value.code == 2
        assert "unrecognized arguments: --handlers" in capsys.readouterr().err


def test_worker_rejects_bad_retry_delays(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["worker", "--retry-delays", "soon"]
    assert main(args) == 2
    assert "--retry-delays" in capsys.readouterr().err


def test_settle_heap_freezes_what_is_loaded() -> None:
    import gc

    from flagbot.bot.entry.serving.heap import settle_heap

    try:
        settle_heap()
        assert gc.get_freeze_count() > 1000  # Flask, Huey, ... are out of the collector's way
    finally:
        gc.unfreeze()


def test_the_state_dir_and_everything_in_it_are_private(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "fresh" / "state")
    srv = Served(settings)
    try:
        assert post(srv.url, payload(dir=str(tmp_path)), delivery="p-1").status_code == 202
        led = SqliteLedger(settings.state_dir / "ledger.db")
        wait_for(lambda: led.get("p-1").status == "done", 20, "p-1 done")
    finally:
        srv.stop()
    assert settings.state_dir.stat().st_mode & 0o777 == 0o700
    loose = [p for p in settings.state_dir.rglob("*") if p.stat().st_mode & 0o077]
    assert loose == [], loose


def test_clones_made_under_the_private_umask_are_private(tmp_path: Path) -> None:
    from flagbot.bot.settings import private_state
    from flagbot.bot.work.workspace import GitWorkspace

    old = os.umask(0o022)
    try:
        private_state(tmp_path / "state")
        workspace = GitWorkspace(tmp_path / "state", "o/r", "https://example.invalid/o/r.git")
        workspace.ensure()
    finally:
        os.umask(old)
    loose = [p for p in (tmp_path / "state").rglob("*") if p.stat().st_mode & 0o077]
    assert loose == [], loose
