"""Delivery reconciliation against the emulator's delivery log: the real app and worker, the
real handlers, SQLite and Redis stores; deliveries are really POSTed to the bot (and again when
reconciliation asks for them)."""

# ruff: noqa: F811  (fixtures imported from tests/bot/core_support.py, then used as arguments)

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from flagbot.bot.chores.reconcile import (
    LAST_ROUND_KEY,
    LOCK_NAME,
    GitHubDeliveryLog,
    Reconciler,
    Round,
    next_cursor,
    parse_time,
)
from flagbot.bot.locks import RepoLocks
from flagbot.bot.monitoring import metrics
from flagbot.bot.monitoring.metrics import RECONCILED
from flagbot.bot.settings import Settings
from flagbot.bot.store.chores import open_chores
from flagbot.bot.store.factory import open_ledger
from testing.bot_e2e import SECRET, app_settings, serving, wait_until
from testing.github_emulator import Emulator
from tests.bot.core_support import free_port, redis_server, redis_url  # noqa: F401  (fixtures)
from tests.bot.handlers_support import BASE_FILES, REPO


@pytest.fixture(params=["sqlite", "redis"])
def store(request: pytest.FixtureRequest) -> str | None:
    """None for SQLite files, else the URL of a fresh Redis database."""
    if request.param == "sqlite":
        return None
    url: str = request.getfixturevalue("redis_url")
    return url


def bot_settings(emu: Emulator, tmp_path: Path, redis: str | None, **extra: Any) -> Settings:
    return app_settings(emu, tmp_path / "state", redis_url=redis, **extra)


def comment_event(emu: Emulator, number: int, body: str) -> dict[str, Any]:
    return emu.payload(event="issue_comment", action="created", repo=REPO, number=number,
                       sender="alice", body=body)


def attempts_of(emu: Emulator, guid: str) -> list[dict[str, Any]]:
    return [d for d in emu.hook_deliveries() if d["guid"] == guid]


def bot_comments(emu: Emulator, number: int) -> list[str]:
    return [c["body"] for c in emu.comments(REPO, number) if c["user"]["login"] == emu.bot_login]


def test_deliveries_sent_while_the_bot_was_down_are_redelivered_and_run_once(
        emu: Emulator, tmp_path: Path, store: str | None) -> None:
    emu.create_repo(REPO, files=dict(BASE_FILES))
    emu.push_commit(REPO, branch="feature", files={"src/x.py": "x = 2\n"})
    pr = emu.open_pull(REPO, head="feature")["number"]
    port = free_port()
    emu.set_webhook(f"http://127.0.0.1:{port}/webhook", SECRET)
    missed = emu.deliver("issue_comment", comment_event(emu, pr, "/help"))
    ping = emu.deliver("ping", emu.payload(event="ping"))
    assert (missed["status"], ping["status"]) == ("failed to connect", "failed to connect")

    settings = bot_settings(emu, tmp_path, store, reconcile_minutes=0.1)  # a round each 6 s
    started = time.time()
    with serving(settings, port=port):
        ledger = open_ledger(settings)
        wait_until(lambda: (row := ledger.get(missed["guid"])) is not None
                   and row.status == "done", 20, "the missed delivery redelivered and done")
        redone = [a for a in attempts_of(emu, missed["guid"]) if a["redelivery"]]
        assert parse_time(redone[0]["delivered_at"]) - started < 6.0 + 1  # within one interval
        assert len(bot_comments(emu, pr)) == 1  # the /help answer, once
        # while the bot is up: a delivery it records at once is never asked for again
        live = emu.deliver("issue_comment", comment_event(emu, pr, "/help"))
        assert live["status_code"] == 202
        last = open_chores(settings).get(LAST_ROUND_KEY)
        wait_until(lambda: open_chores(settings).get(LAST_ROUND_KEY) != last, 10, "a later round")
        time.sleep(2.0)  # and one more
        emu.wait_deliveries()
    assert [a["redelivery"] for a in attempts_of(emu, missed["guid"])] == [False, True]
    assert len(attempts_of(emu, ping["guid"])) == 1
    assert len(attempts_of(emu, live["guid"])) == 1
    row = open_ledger(settings).get(missed["guid"])
    assert row is not None and (row.attempts, row.redeliveries) == (1, 0)
    assert len(bot_comments(emu, pr)) == 2  # one per delivery, none twice
    notes = open_chores(settings).notes()
    assert [(n.guid, n.reason) for n in notes] == [(missed["guid"], "missing")]


def test_a_delivery_acknowledged_then_lost_is_redelivered_but_a_known_one_is_not(
        emu: Emulator, tmp_path: Path) -> None:
    """GitHub logged both as answered 202; a power cut lost one from the ledger."""
    emu.create_repo(REPO, files=dict(BASE_FILES))
    pr = emu.open_issue(REPO, title="question")["number"]
    settings = bot_settings(emu, tmp_path, None, reconcile_minutes=0)  # rounds driven here
    with serving(settings) as url:
        emu.set_webhook(url + "/webhook", SECRET)
        kept = emu.deliver("issue_comment", comment_event(emu, pr, "hello"))
        lost = emu.deliver("issue_comment", comment_event(emu, pr, "hello again"))
        ledger = open_ledger(settings)
        wait_until(lambda: all(ledger.get(d["guid"]) for d in (kept, lost)), 10, "both recorded")
        forget(settings, lost["guid"])
        rec = reconciler(settings)
        first = rec.round(force=True)
        assert first is not None and [a.guid for a in first.asked] == [lost["guid"]]
        assert first.skipped == {"known": 1}
        emu.wait_deliveries()
        wait_until(lambda: ledger.get(lost["guid"]) is not None, 10, "the redelivery recorded")
        second = rec.round(force=True)  # the redelivery arrived: nothing more to ask for
        assert second is not None and second.asked == []
    assert [a["redelivery"] for a in attempts_of(emu, lost["guid"])] == [False, True]
    assert len(attempts_of(emu, kept["guid"])) == 1


def forget(settings: Settings, guid: str) -> None:
    """What a lost WAL tail does to a row (SQLite): it is simply not there."""
    import sqlite3

    with sqlite3.connect(settings.ledger_path) as conn:
        conn.execute("delete from deliveries where id=?", (guid,))


def reconciler(settings: Settings, **changes: Any) -> Reconciler:
    settings = settings.with_overrides(reconcile_minutes=10.0, **changes)
    return Reconciler(settings, open_ledger(settings), open_chores(settings),
                      GitHubDeliveryLog(settings))


def test_a_delivery_whose_handlers_failed_here_is_redelivered_once(
        emu: Emulator, tmp_path: Path, store: str | None) -> None:
    emu.create_repo(REPO, files=dict(BASE_FILES))
    number = emu.open_issue(REPO)["number"]
    settings = bot_settings(emu, tmp_path, store, reconcile_minutes=0)
    with serving(settings) as url:
        emu.set_webhook(url + "/webhook", SECRET)
        # the App's token refused: a permanent failure, so the row fails at its first try
        emu.inject("POST", r"/app/installations/\d+/access_tokens", 404)
        failing = emu.deliver("issue_comment", comment_event(emu, number, "/help"))
        ledger = open_ledger(settings)
        wait_until(lambda: (row := ledger.get(failing["guid"])) is not None
                   and row.status == "failed", 20, "the handlers' try failed")
        emu.faults.clear()
        rec = reconciler(settings)
        first = rec.round(force=True)
        assert first is not None and [(a.guid, a.reason) for a in first.asked] == [
            (failing["guid"], "failed")]
        emu.wait_deliveries()
        wait_until(lambda: (row := ledger.get(failing["guid"])) is not None
                   and row.status == "done", 20, "the redelivery handled")
        again = rec.round(force=True)
        assert again is not None and again.asked == []
    assert len(bot_comments(emu, number)) == 1


def test_at_most_the_configured_number_a_round_and_the_rest_next_round(
        emu: Emulator, tmp_path: Path) -> None:
    emu.create_repo(REPO, files=dict(BASE_FILES))
    number = emu.open_issue(REPO)["number"]
    emu.set_webhook(f"http://127.0.0.1:{free_port()}/webhook", SECRET)  # nobody listens
    missed = [emu.deliver("issue_comment", comment_event(emu, number, f"c{i}"))["guid"]
              for i in range(5)]
    settings = bot_settings(emu, tmp_path, None, reconcile_max=2)
    rec = reconciler(settings)
    before = RECONCILED.labels(outcome="redelivered_missing")._value.get()
    rounds = [rec.round(force=True) for _ in range(3)]
    asked = [[a.guid for a in r.asked] for r in rounds if r is not None]
    assert asked == [missed[:2], missed[2:4], missed[4:]]
    assert [r.deferred for r in rounds if r is not None] == [3, 1, 0]
    assert RECONCILED.labels(outcome="redelivered_missing")._value.get() - before == 5
    assert b'flagbot_reconciled_total{outcome="redelivered_missing"}' in metrics.render()
    emu.wait_deliveries()
    # every redelivery failed to connect too: asked for lately, so not asked again at once
    again = rec.round(force=True)
    assert again is not None and again.asked == [] and again.skipped == {"asked_lately": 5}


def test_one_round_at_a_time_across_workers(emu: Emulator, tmp_path: Path,
                                            store: str | None) -> None:
    settings = bot_settings(emu, tmp_path, store)
    rec = reconciler(settings)
    with RepoLocks(settings).hold(LOCK_NAME):  # another worker is in its round
        assert rec.round(force=True) is None
    assert rec.round(force=True) is not None


def test_a_round_right_after_another_workers_round_is_skipped(emu: Emulator,
                                                              tmp_path: Path) -> None:
    settings = bot_settings(emu, tmp_path, None, reconcile_minutes=10.0)
    ledger, chores = open_ledger(settings), open_chores(settings)
    first = Reconciler(settings, ledger, chores, GitHubDeliveryLog(settings))
    second = Reconciler(settings, ledger, chores, GitHubDeliveryLog(settings))
    assert first.round() is not None
    assert second.round() is None


def test_the_log_is_read_back_page_by_page(emu: Emulator, tmp_path: Path) -> None:
    emu.create_repo(REPO, files=dict(BASE_FILES))
    number = emu.open_issue(REPO)["number"]
    emu.set_webhook(f"http://127.0.0.1:{free_port()}/webhook", SECRET)
    for i in range(250):
        emu.deliver("issue_comment", comment_event(emu, number, f"c{i}"))
    settings = bot_settings(emu, tmp_path, None, reconcile_max=1000, write_spacing_s=0.0)
    emu.reset_calls()
    result = reconciler(settings).round(force=True)
    assert result is not None and len(result.asked) == 250
    pages = [c for c in emu.calls if c.path == "/app/hook/deliveries"]
    assert [c.query.get("cursor") is None for c in pages] == [True, False, False]


def test_next_cursor_reads_githubs_link_header() -> None:
    link = ('<https://api.github.com/app/hook/deliveries?per_page=2&cursor=v1_93>; rel="next", '
            '<https://api.github.com/app/hook/deliveries?per_page=2&cursor=v1_97>; rel="prev"')
    assert next_cursor(link) == "v1_93"
    assert next_cursor('<https://x/app/hook/deliveries?cursor=v1_1>; rel="prev"') is None
    assert next_cursor(None) is None


def test_the_first_round_looks_back_a_day_and_later_rounds_never_further(
        emu: Emulator, tmp_path: Path) -> None:
    emu.create_repo(REPO, files=dict(BASE_FILES))
    number = emu.open_issue(REPO)["number"]
    emu.set_webhook(f"http://127.0.0.1:{free_port()}/webhook", SECRET)
    old = emu.deliver("issue_comment", comment_event(emu, number, "two days ago"))
    emu.hooks.deliveries[-1].delivered_at -= 2 * 86400  # GitHub keeps 3 days; the bot reads 1
    settings = bot_settings(emu, tmp_path, None)
    rec = reconciler(settings)
    first = rec.round(force=True)
    assert first is not None and (first.read, first.asked) == (0, [])
    second = rec.round(force=True)
    assert second is not None and second.read == 0
    assert len(attempts_of(emu, old["guid"])) == 1


def test_flagbot_reconcile_dry_run_says_what_it_would_ask_and_asks_nothing(
        emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from flagbot.bot.chores.reconcile import main

    emu.create_repo(REPO, files=dict(BASE_FILES))
    number = emu.open_issue(REPO)["number"]
    emu.set_webhook(f"http://127.0.0.1:{free_port()}/webhook", SECRET)
    missed = emu.deliver("issue_comment", comment_event(emu, number, "hi"))
    for name, value in (("GITHUB_APP_ID", emu.app_id), ("GITHUB_PRIVATE_KEY", emu.private_key_pem),
                        ("GITHUB_API_URL", emu.url), ("FLAGBOT_STATE_DIR", str(tmp_path / "s"))):
        monkeypatch.setenv(name, value)
    assert main(["--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"would ask GitHub to redeliver {missed['guid']} (issue_comment.created" in out
    assert len(attempts_of(emu, missed["guid"])) == 1
    assert main([]) == 0
    assert f"asked GitHub to redeliver {missed['guid']}" in capsys.readouterr().out
    emu.wait_deliveries()
    assert [a["redelivery"] for a in attempts_of(emu, missed["guid"])] == [False, True]


def test_a_redelivery_that_reached_the_bot_is_never_asked_for_again(
        emu: Emulator, tmp_path: Path) -> None:
    """Even when the ledger lost it once more: GitHub's log shows it answered."""
    emu.create_repo(REPO, files=dict(BASE_FILES))
    number = emu.open_issue(REPO)["number"]
    settings = bot_settings(emu, tmp_path, None, reconcile_minutes=0)
    with serving(settings) as url:
        emu.set_webhook(url + "/webhook", SECRET)
        sent = emu.deliver("issue_comment", comment_event(emu, number, "hello"))
        ledger = open_ledger(settings)
        wait_until(lambda: ledger.get(sent["guid"]), 10, "recorded")
        forget(settings, sent["guid"])
        rec = reconciler(settings)
        assert [a.guid for a in (rec.round(force=True) or Round()).asked] == [sent["guid"]]
        emu.wait_deliveries()
        wait_until(lambda: ledger.get(sent["guid"]), 10, "the redelivery recorded")
        forget(settings, sent["guid"])
        again = rec.round(force=True)
    assert again is not None and again.asked == [] and again.skipped == {"redelivery_arrived": 1}


def test_a_delivery_github_refuses_to_redeliver_does_not_block_the_others(
        emu: Emulator, tmp_path: Path) -> None:
    emu.create_repo(REPO, files=dict(BASE_FILES))
    number = emu.open_issue(REPO)["number"]
    emu.set_webhook(f"http://127.0.0.1:{free_port()}/webhook", SECRET)
    gone, kept = (emu.deliver("issue_comment", comment_event(emu, number, t)) for t in "ab")
    emu.inject("POST", rf"/app/hook/deliveries/{gone['id']}/attempts", 422)
    rec = reconciler(bot_settings(emu, tmp_path, None))
    first = rec.round(force=True)
    assert first is not None and first.refused == 1
    assert [a.guid for a in first.asked] == [kept["guid"]]
    assert first.mark == kept["id"] - 1  # held for the one in flight only, not the refused one


def test_redeliveries_are_paced_like_every_github_write(emu: Emulator, tmp_path: Path) -> None:
    from flagbot.bot.github.pacing import WriteBucket

    emu.create_repo(REPO, files=dict(BASE_FILES))
    number = emu.open_issue(REPO)["number"]
    emu.set_webhook(f"http://127.0.0.1:{free_port()}/webhook", SECRET)
    for i in range(4):
        emu.deliver("issue_comment", comment_event(emu, number, f"c{i}"))
    settings = bot_settings(emu, tmp_path, None)
    bucket = WriteBucket(burst=1, spacing_s=0.3)
    rec = Reconciler(settings, open_ledger(settings), open_chores(settings),
                     GitHubDeliveryLog(settings), pace=bucket.acquire)
    emu.reset_calls()
    assert len((rec.round(force=True) or Round()).asked) == 4
    posts = [c.ts for c in emu.calls if c.method == "POST"]
    assert len(posts) == 4 and min(b - a for a, b in zip(posts, posts[1:], strict=False)) >= 0.25


def test_a_later_round_reads_only_what_is_newer_than_the_settled_mark(
        emu: Emulator, tmp_path: Path) -> None:
    emu.set_webhook(f"http://127.0.0.1:{free_port()}/webhook", SECRET)
    settings = bot_settings(emu, tmp_path, None)
    ledger = open_ledger(settings)
    for i in range(150):  # delivered, and in the ledger: nothing to ask for
        sent = emu.deliver("issue_comment", {"action": "created", "n": i})
        ledger.record(delivery_id=sent["guid"], event="issue_comment", action="created",
                      repo=None, payload=b"{}", wanted=False)
    rec = reconciler(settings)
    first = rec.round(force=True)
    assert first is not None and (first.read, first.skipped) == (150, {"known": 150})
    newer = emu.deliver("issue_comment", {"action": "created", "n": "new"})
    emu.reset_calls()
    second = rec.round(force=True)
    assert second is not None and (second.read, [a.guid for a in second.asked]) == (1, [newer["guid"]])
    assert len([c for c in emu.calls if c.path == "/app/hook/deliveries"]) == 1  # one page
