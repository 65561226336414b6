"""/healthz: unhealthy when the App cannot authenticate or the queue is stuck; workers' beacons."""

# ruff: noqa: F811  (fixtures imported from tests/bot/core_support.py, then used as arguments)

from __future__ import annotations

import time
from pathlib import Path

import requests

from flagbot.bot.entry.web import create_app
from flagbot.bot.store.sqlite import SqliteLedger
from flagbot.bot.worker import Worker
from testing.github_emulator import Emulator, new_private_key_pem
from tests.bot.core_support import (
    FakeHandlers,
    ServerThread,
    make_settings,
    payload,
    post,
    wait_for,
)


def healthz(url: str) -> tuple[int, dict]:
    reply = requests.get(url + "/healthz", timeout=10)
    return reply.status_code, reply.json()


def test_healthz_is_ok_when_the_app_authenticates(emu: Emulator, tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "state", app_id=emu.app_id, private_key=emu.private_key_pem,
                             api_url=emu.url)
    with ServerThread(create_app(settings)) as srv:
        code, body = healthz(srv.url)
    assert code == 200 and body["checks"]["github_app"] == "ok (flagbot)"


def test_healthz_is_503_when_the_app_cannot_authenticate(emu: Emulator, tmp_path: Path) -> None:
    wrong = new_private_key_pem()
    settings = make_settings(tmp_path / "state", app_id=emu.app_id, private_key=wrong, api_url=emu.url)
    with ServerThread(create_app(settings)) as srv:
        reply = requests.get(srv.url + "/healthz", timeout=10)
    assert reply.status_code == 503 and reply.json()["status"] == "unhealthy"
    assert reply.json()["checks"]["github_app"].startswith(f"cannot authenticate as App {emu.app_id}")
    assert "401" in reply.json()["checks"]["github_app"]
    assert wrong.splitlines()[1] not in reply.text


def test_healthz_without_app_settings_is_not_a_failure(tmp_path: Path) -> None:
    with ServerThread(create_app(make_settings(tmp_path / "state"))) as srv:
        code, body = healthz(srv.url)
    assert code == 200 and body["checks"]["github_app"] == "not configured"


def test_a_queue_nobody_takes_from_turns_unhealthy_until_a_worker_reports(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "state")
    with ServerThread(create_app(settings.with_overrides(stuck_after_s=0.3))) as srv:
        assert post(srv.url, payload()).status_code == 202
        assert healthz(srv.url)[0] == 200  # waiting, but not for long yet
        time.sleep(0.5)
        code, body = healthz(srv.url)
        assert code == 503 and body["checks"]["queue"].startswith("stuck: 1 waiting")
        assert "no worker has ever reported" in body["checks"]["queue"]
        SqliteLedger(settings.ledger_path).beacon("w1", time.time())
        assert healthz(srv.url)[0] == 200


def test_a_worker_reports_its_progress(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "state")
    worker = Worker(settings, FakeHandlers(settings), threads=1, lease_s=3)
    worker.start()
    try:
        with ServerThread(create_app(settings.with_overrides(stuck_after_s=0.5))) as srv:
            post(srv.url, payload(), delivery="h-1")
            wait_for(lambda: SqliteLedger(settings.ledger_path).get("h-1").status == "done")
            time.sleep(0.6)
            assert healthz(srv.url)[0] == 200  # nothing waits: not stuck, however long ago
    finally:
        worker.stop()
    [beacon] = SqliteLedger(settings.ledger_path).beacons().values()
    assert beacon > time.time() - 30
