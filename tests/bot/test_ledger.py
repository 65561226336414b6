"""The ledger's rules, the same for both stores (SQLite file, real redis-server)."""

# ruff: noqa: F811  (fixtures imported from tests/bot/core_support.py, then used as arguments)

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from flagbot.bot.store import MAX_TRIES, Ledger
from flagbot.bot.store.redis import RedisLedger
from flagbot.bot.store.sqlite import SqliteLedger
from tests.bot.core_support import redis_server, redis_url  # noqa: F401  (fixtures)


@pytest.fixture(params=["sqlite", "redis"])
def led(request: pytest.FixtureRequest, tmp_path: Path) -> Ledger:
    if request.param == "sqlite":
        return SqliteLedger(tmp_path / "ledger.db")
    return RedisLedger(request.getfixturevalue("redis_url"))


def add(led: Ledger, delivery_id: str = "d1", *, wanted: bool = True, repo: str | None = "o/r"):
    return led.record(delivery_id=delivery_id, event="pull_request", action="opened", repo=repo,
                      payload=b'{"action": "opened"}', wanted=wanted)


def test_new_delivery_is_queued_with_its_fields(led: Ledger) -> None:
    assert add(led).outcome == "queued"
    row = led.get("d1")
    assert (row.status, row.event, row.action, row.repo) == ("queued", "pull_request", "opened", "o/r")
    assert row.payload_json() == {"action": "opened"} and row.tries_left == MAX_TRIES
    assert led.counts()["queued"] == 1


def test_missing_repo_and_action_read_back_as_none(led: Ledger) -> None:
    led.record(delivery_id="x", event="installation", action=None, repo=None, payload=b"{}",
               wanted=True)
    row = led.get("x")
    assert row.repo is None and row.action is None


def test_a_delivery_is_claimed_once(led: Ledger) -> None:
    add(led)
    first = led.claim("d1", "w1", 30)
    assert first and first.status == "running" and first.attempts == 1 and first.owner == "w1"
    assert led.claim("d1", "w2", 30) is None


def test_unknown_delivery_cannot_be_claimed(led: Ledger) -> None:
    assert led.claim("nope", "w1", 30) is None


def test_done_only_after_finish_and_never_rerun(led: Ledger) -> None:
    add(led)
    led.claim("d1", "w1", 30)
    assert led.get("d1").status == "running"
    assert led.finish("d1", "w1", '{"ok": true}')
    row = led.get("d1")
    assert row.status == "done" and row.result == '{"ok": true}' and row.finished_at
    verdict = add(led)
    assert (verdict.outcome, verdict.enqueue) == ("done_already", False)
    assert led.claim("d1", "w1", 30) is None


def test_failed_delivery_is_rerun_on_redelivery(led: Ledger) -> None:
    add(led)
    led.claim("d1", "w1", 30)
    assert led.fail("d1", "w1", "RuntimeError: boom", retry_at=None)
    assert led.get("d1").status == "failed" and led.get("d1").error == "RuntimeError: boom"
    verdict = add(led)
    assert (verdict.outcome, verdict.enqueue) == ("requeued", True)
    row = led.claim("d1", "w2", 30)
    assert row and row.attempts == 2 and row.redeliveries == 1 and row.tries_left == MAX_TRIES - 1


def test_a_retry_keeps_the_row_queued_with_fewer_tries(led: Ledger) -> None:
    add(led)
    led.claim("d1", "w1", 30)
    led.fail("d1", "w1", "boom", retry_at=time.time() + 5)
    row = led.get("d1")
    assert row.status == "queued" and row.tries_left == MAX_TRIES - 1 and row.error == "boom"


def test_only_the_owner_settles_a_row(led: Ledger) -> None:
    add(led)
    led.claim("d1", "w1", 30)
    assert not led.finish("d1", "intruder", "{}")
    assert not led.fail("d1", "intruder", "x", retry_at=None)
    assert led.get("d1").status == "running"


def test_redelivery_while_running_under_a_live_lease_is_not_queued(led: Ledger) -> None:
    add(led)
    led.claim("d1", "w1", 30)
    assert add(led).outcome == "running"


def test_expired_lease_is_swept_and_claimable_by_another_worker(led: Ledger) -> None:
    add(led)
    led.claim("d1", "dead-worker", 0.05)
    time.sleep(0.1)
    assert led.stale(queued_grace_s=600) == ["d1"]
    row = led.claim("d1", "w2", 30)
    assert row and row.owner == "w2" and row.attempts == 2


def test_heartbeat_keeps_a_running_row_from_being_swept(led: Ledger) -> None:
    add(led)
    led.claim("d1", "w1", 0.2)
    for _ in range(4):
        time.sleep(0.1)
        led.heartbeat(["d1"], "w1", 0.2)
    assert led.stale(queued_grace_s=600) == []
    assert led.claim("d1", "w2", 30) is None


def test_queued_rows_left_too_long_are_swept_once_per_grace(led: Ledger) -> None:
    add(led)
    time.sleep(0.05)
    assert led.stale(queued_grace_s=0.01) == ["d1"]
    assert led.stale(queued_grace_s=10) == []  # touched by the sweep


def test_dropped_delivery_stays_dropped_unless_wanted_later(led: Ledger) -> None:
    assert add(led, wanted=False).outcome == "dropped"
    assert add(led, wanted=False).outcome == "dropped"
    assert led.claim("d1", "w", 30) is None
    assert add(led, wanted=True).outcome == "requeued"
    assert led.claim("d1", "w", 30) is not None


def test_counts_follow_every_transition(led: Ledger) -> None:
    for i in range(3):
        add(led, f"d{i}")
    led.claim("d0", "w", 30)
    led.finish("d0", "w", "{}")
    led.claim("d1", "w", 30)
    counts = led.counts()
    assert (counts["queued"], counts["running"], counts["done"]) == (1, 1, 1)


def test_check_writable_passes(led: Ledger) -> None:
    led.check_writable()


def test_concurrent_claims_have_exactly_one_winner(led: Ledger) -> None:
    add(led)
    winners: list[str] = []
    barrier = threading.Barrier(8)

    def race(name: str) -> None:
        barrier.wait()
        if led.claim("d1", name, 30):
            winners.append(name)

    threads = [threading.Thread(target=race, args=(f"w{i}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(winners) == 1


def test_sqlite_ledger_uses_wal_and_normal_sync(tmp_path: Path) -> None:
    led = SqliteLedger(tmp_path / "ledger.db")
    add(led)
    conn = sqlite3.connect(tmp_path / "ledger.db")
    assert conn.execute("pragma journal_mode").fetchone()[0] == "wal"
    assert led._conn().execute("pragma synchronous").fetchone()[0] == 1  # NORMAL


def test_sqlite_ledger_gives_each_thread_its_own_connection(tmp_path: Path) -> None:
    led = SqliteLedger(tmp_path / "ledger.db")
    seen: list[int] = []
    t = threading.Thread(target=lambda: seen.append(id(led._conn())))
    t.start()
    t.join()
    assert seen[0] != id(led._conn())


def stored_payloads(path: Path) -> list[tuple[str, int]]:
    with sqlite3.connect(path) as conn:
        return [(codec, len(data)) for codec, data in conn.execute("select codec, data from payloads")]


def test_payloads_are_stored_compressed_and_read_back_exactly(tmp_path: Path) -> None:
    led = SqliteLedger(tmp_path / "ledger.db")
    body = json.dumps({"repository": {"url": "https://api.github.com/repos/o/r"},
                       "files": [f"https://api.github.com/repos/o/r/contents/f{i}" for i in range(200)]}
                      ).encode()
    noise = os.urandom(2000)  # incompressible: kept as it is
    led.record(delivery_id="json", event="push", action=None, repo="o/r", payload=body, wanted=True)
    led.record(delivery_id="noise", event="push", action=None, repo="o/r", payload=noise, wanted=True)
    (codec, size), (raw_codec, raw_size) = stored_payloads(tmp_path / "ledger.db")
    assert codec == "zlib" and size < len(body) / 4
    assert (raw_codec, raw_size) == ("raw", len(noise))
    assert led.get("json").payload == body and led.claim("noise", "w", 30).payload == noise


def test_a_redelivery_stores_no_second_payload(tmp_path: Path) -> None:
    led = SqliteLedger(tmp_path / "ledger.db")
    for _ in range(3):
        add(led)
    assert len(stored_payloads(tmp_path / "ledger.db")) == 1


def test_a_try_whose_worker_died_counts_and_the_last_one_fails_the_delivery(led: Ledger) -> None:
    add(led)
    for attempt in range(1, MAX_TRIES + 1):
        row = led.claim("d1", f"w{attempt}", -1)  # the worker dies: its lease is already over
        assert row is not None and row.attempts == attempt
        if attempt < MAX_TRIES:
            assert led.fail_abandoned() == [] and led.stale(queued_grace_s=600) == ["d1"]
    assert led.stale(queued_grace_s=600) == []
    assert led.claim("d1", "w9", 30) is None  # no fourth try
    assert led.fail_abandoned() == [("d1", "pull_request")]
    row = led.get("d1")
    assert (row.status, row.attempts, row.tries_left) == ("failed", MAX_TRIES, 0)
    assert f"try {MAX_TRIES} of {MAX_TRIES}" in row.error and led.counts()["failed"] == 1
    assert led.fail_abandoned() == []
