"""GET /dashboard: access (token, public, off), what the page shows and hides, the stores'
bounds and filters (SQLite and Redis), the recorder's hooks and the charts."""

from __future__ import annotations

import json
import re
import time

import pytest

from flagbot.bot.dashboard import store as dash_store
from flagbot.bot.dashboard.charts import Point, Series, line_chart
from flagbot.bot.dashboard.factory import open_store
from flagbot.bot.dashboard.store import DeviceRun, KernelResult, RunFilter
from flagbot.bot.dashboard.store_redis import RedisDashStore
from flagbot.bot.dashboard.store_sqlite import SqliteDashStore
from flagbot.bot.dashboard.view import DELIVERIES_PER_PAGE
from flagbot.bot.entry.web import create_app
from flagbot.bot.feed.log import LabeledPR
from flagbot.bot.settings import Settings
from flagbot.bot.store.factory import open_label_log, open_ledger
from tests.bot.core_support import redis_server, redis_url  # noqa: F401  (fixtures)

TOKEN = "s3cret-dashboard-token"


def app_for(tmp_path, **overrides):
    settings = Settings(state_dir=tmp_path / "state",
                        startup_warned=True, **overrides)
    return settings, create_app(settings).test_client()


def run(request: str = "7-" + "a" * 40 + "-00000001-a_x100", **changes) -> DeviceRun:
    fields = dict(request=request, repo="flagos/FlagGems", pr=7, sha="a" * 40, device="a_x100",
                  status="queued", conclusion=None, queued_at=time.time())
    fields.update(changes)
    return DeviceRun(**fields)


@pytest.fixture(params=["sqlite", "redis"])
def store(request, tmp_path):
    if request.param == "sqlite":
        return SqliteDashStore(tmp_path / "dashboard.db")
    return RedisDashStore(request.getfixturevalue("redis_url"))


def test_without_token_or_public_the_dashboard_is_off_and_says_how_to_turn_it_on(tmp_path) -> None:
    _, client = app_for(tmp_path)
    reply = client.get("/dashboard")
    assert reply.status_code == 404 and "FLAGBOT_DASHBOARD_TOKEN" in reply.text


@pytest.mark.parametrize("headers, query", [
    ({}, ""), ({"Authorization": "Bearer wrong"}, ""), ({}, "?token=wrong"),
    ({"Authorization": f"Basic {TOKEN}"}, ""), ({"Authorization": "Bearer"}, "?token=")])
def test_a_wrong_or_missing_token_gets_401_and_no_data(tmp_path, headers, query) -> None:
    settings, client = app_for(tmp_path, dashboard_token=TOKEN)
    open_ledger(settings).record(delivery_id="d-1", event="pull_request", action="opened",
                                 repo="flagos/FlagGems", payload=b"{}", wanted=True)
    reply = client.get("/dashboard" + query, headers=headers)
    assert reply.status_code == 401 and "Bearer" in reply.headers["WWW-Authenticate"]
    assert "FlagGems" not in reply.text and "pull_request" not in reply.text


def test_the_token_works_as_bearer_or_query_and_the_query_leaves_a_cookie_not_the_token(tmp_path) -> None:
    _, client = app_for(tmp_path, dashboard_token=TOKEN)
    assert client.get("/dashboard", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    reply = client.get(f"/dashboard?token={TOKEN}")
    assert reply.status_code == 200 and TOKEN not in reply.text
    cookie = reply.headers["Set-Cookie"]
    assert TOKEN not in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert client.get("/dashboard?page=1").status_code == 200  # the page's own links, by cookie
    client.delete_cookie("flagbot_dashboard", path="/dashboard")
    assert client.get("/dashboard?page=1").status_code == 401


def test_public_opens_it_without_a_token_and_the_page_forbids_scripts(tmp_path) -> None:
    _, client = app_for(tmp_path, dashboard_public=True)
    reply = client.get("/dashboard")
    assert reply.status_code == 200 and "<script" not in reply.text
    assert "default-src 'none'" in reply.headers["Content-Security-Policy"]
    assert reply.headers["Cache-Control"] == "no-store"


def test_the_settings_read_the_dashboard_environment() -> None:
    on = Settings.from_env({"FLAGBOT_DASHBOARD_TOKEN": "t", "FLAGBOT_DASHBOARD_PUBLIC": "1"})
    assert (on.dashboard_token, on.dashboard_public) == ("t", True)
    off = Settings.from_env({})
    assert (off.dashboard_token, off.dashboard_public) == (None, False)
    assert "dashboard_token" not in repr(on)


def test_names_are_escaped_payloads_and_secrets_stay_out(tmp_path) -> None:
    settings, client = app_for(tmp_path, dashboard_public=True, webhook_secret="hook-secret-1")
    payload = {"action": "opened", "number": 12, "pull_request": {
        "number": 12, "body": "only-in-the-body", "title": "<img src=x onerror=alert(1)>"}}
    open_ledger(settings).record(delivery_id="d-12", event="pull_request", action="opened",
                                 repo="o/r<u>", payload=json.dumps(payload).encode(), wanted=True)
    open_label_log(settings).labeled(LabeledPR("o/r", 12, "module: PrivateUse1",
                                               "<script>alert(1)</script>", "javascript:alert(1)"))
    page = client.get("/dashboard").text
    assert "#12" in page and "o/r&lt;u&gt;" in page and "&lt;script&gt;alert(1)" in page
    assert "<script>" not in page and "javascript:" not in page and "<u>" not in page
    assert "only-in-the-body" not in page and "hook-secret-1" not in page


def test_deliveries_are_paged_newest_first(tmp_path) -> None:
    settings, client = app_for(tmp_path, dashboard_public=True)
    ledger = open_ledger(settings)
    for i in range(DELIVERIES_PER_PAGE + 5):
        ledger.record(delivery_id=f"d-{i:03d}", event="issue_comment", action="created",
                      repo="o/r", payload=b"{}", wanted=False)
        time.sleep(0.001)
    first, second = client.get("/dashboard").text, client.get("/dashboard?page=1").text
    newest = f"d-{DELIVERIES_PER_PAGE + 4:03d}"
    assert newest in first and "d-005" in first and "d-004" not in first and "older" in first
    assert "d-004" in second and "d-000" in second and newest not in second
    assert client.get("/dashboard?page=x").status_code == 200  # a bad page is the first


def test_runs_are_kept_filtered_and_bounded(store, monkeypatch) -> None:
    monkeypatch.setattr(dash_store, "MAX_RUNS", 5)
    monkeypatch.setattr("flagbot.bot.dashboard.store_sqlite.MAX_RUNS", 5)
    monkeypatch.setattr("flagbot.bot.dashboard.store_redis.MAX_RUNS", 5)
    for i in range(8):
        device = "a_x100" if i % 2 else "b_y200"
        store.run_started(run(f"{i}-{'b' * 40}-0000000{i}-{device}", pr=i, device=device,
                              repo="flagos/FlagGems" if i < 6 else "other/repo"))
    assert [r.pr for r in store.runs(RunFilter(), limit=10)] == [7, 6, 5, 4, 3]
    assert [r.pr for r in store.runs(RunFilter(device="a_x100"), limit=10)] == [7, 5, 3]
    assert [r.pr for r in store.runs(RunFilter(repo="FLAGOS/flaggems"), limit=10)] == [5, 4, 3]
    assert [r.pr for r in store.runs(RunFilter(), limit=2, offset=2)] == [5, 4]
    devices, repos = store.run_facets()
    assert devices == ["a_x100", "b_y200"] and repos == ["flagos/FlagGems", "other/repo"]


def test_a_run_moves_and_a_second_request_for_the_head_counts_as_a_retry(store) -> None:
    first, again = run(), run("7-" + "a" * 40 + "-00000002-a_x100")
    store.run_started(first)
    store.run_started(first)  # a redelivered start keeps one row
    store.run_moved(first.request, status="in_progress", at=10.0, run_id=5, url="https://x/5")
    store.run_moved(first.request, status="completed", at=20.0, conclusion="failure")
    store.run_started(again)
    newest, oldest = store.runs(RunFilter(), limit=5)
    assert (newest.retries, oldest.retries) == (1, 0)
    assert (oldest.status, oldest.conclusion, oldest.started_at, oldest.finished_at,
            oldest.run_id, oldest.url) == ("completed", "failure", 10.0, 20.0, 5, "https://x/5")


def test_results_are_bounded_and_read_oldest_first(store, monkeypatch) -> None:
    monkeypatch.setattr("flagbot.bot.dashboard.store_sqlite.MAX_RESULTS", 3)
    monkeypatch.setattr("flagbot.bot.dashboard.store_redis.MAX_RESULTS", 3)
    for i in range(5):
        store.add_results([KernelResult("o/r", i, "c" * 40, "a_x100", "mm", "override", "pass",
                                        1.0 + i / 10, None, 1.0, float(i))])
    assert [r.pr for r in store.results()] == [2, 3, 4]
    assert store.results(device="b_y200") == []


def test_open_store_follows_the_settings(tmp_path, request) -> None:
    url = request.getfixturevalue("redis_url")
    assert isinstance(open_store(Settings(state_dir=tmp_path)), SqliteDashStore)
    assert isinstance(open_store(Settings(state_dir=tmp_path, redis_url=url)), RedisDashStore)


def test_the_chart_draws_a_mark_per_measured_point_and_escapes_titles() -> None:
    points = [Point(1.2, "#1", "o/r#1 @ abcdef1"), Point(None, "#2", "o/r#2 @ 1234567"),
              Point(1.5, "#3", "<o>#3")]
    svg = line_chart([Series("vs baseline", points)], caption="mm <on> a_x100", reference=1.0)
    assert svg.startswith("<svg") and svg.count('class="mark"') == 2
    assert "o/r#1 @ abcdef1" in svg and "&lt;o&gt;#3" in svg and "<on>" not in svg
    assert re.search(r"<polyline points=\"[\d., ]+\"", svg)
    assert line_chart([Series("x", [Point(None, "#1", "")])], caption="empty") == ""


def test_the_bot_records_a_device_run_from_dispatch_to_report(emu, settings) -> None:
    from tests.bot.devices_support import (
        deliver_pr,
        deliver_run,
        device_repo,
        finish_run,
        op,
        open_device_pr,
        report,
    )

    repo = device_repo(emu)
    pr = open_device_pr(emu, repo)
    deliver_pr(emu, settings, repo)
    [queued] = open_store(settings).runs(RunFilter(), limit=5)
    assert (queued.repo, queued.pr, queued.sha, queued.device, queued.status) == (
        "flagos/FlagGems", 1, pr["head"]["sha"], "a_x100", "queued")
    [wf] = emu.workflow_runs(repo)
    emu.set_workflow_run(repo, wf["id"], "in_progress", labels=["self-hosted", "a_x100"])
    deliver_run(emu, settings, repo, wf["id"], action="in_progress", event="workflow_job")
    assert open_store(settings).runs(RunFilter(), limit=5)[0].status == "in_progress"
    finish_run(emu, repo, wf["id"], report([op("softmax", speedup=1.4)]))
    deliver_run(emu, settings, repo, wf["id"])
    [done] = open_store(settings).runs(RunFilter(), limit=5)
    assert (done.status, done.conclusion, done.run_id) == ("completed", "success", wf["id"])
    assert done.started_at is not None and done.finished_at is not None
    [result] = open_store(settings).results()
    assert (result.op, result.kind, result.vs_baseline, result.vs_native, result.accuracy,
            result.sha) == ("softmax", "override", 1.4, None, 1.0, pr["head"]["sha"])


def test_a_push_records_the_old_heads_run_as_cancelled(emu, settings) -> None:
    from tests.bot.devices_support import BACKEND, deliver_pr, device_repo, open_device_pr

    repo = device_repo(emu)
    open_device_pr(emu, repo)
    deliver_pr(emu, settings, repo)
    before = emu.pull(repo, 1)["head"]["sha"]
    emu.push_commit(repo, branch="feature", files={BACKEND: "def softmax(x, dim):\n    return x + 0\n"})
    emu.update_pull_head(repo, 1)
    deliver_pr(emu, settings, repo, action="synchronize", delivery="d-2", before=before)
    newest, old = open_store(settings).runs(RunFilter(), limit=5)
    assert (old.sha, old.status, old.conclusion) == (before, "completed", "cancelled")
    assert newest.status == "queued" and newest.sha != before


@pytest.mark.slow
def test_a_local_run_records_its_ops_accuracy_without_speed(emu, settings) -> None:
    from tests.bot.devices_support import deliver_pr, device_repo, open_device_pr
    from tests.bot.test_devices_local import NVIDIA, backend_files

    repo = device_repo(emu, extra=backend_files())
    softmax = (NVIDIA / "ops/softmax.py").read_text() + "\n# tuned\n"
    open_device_pr(emu, repo, files={"backends/_nvidia/ops/softmax.py": softmax}, labels=("ci: cpu",))
    deliver_pr(emu, settings, repo)
    [done] = open_store(settings).runs(RunFilter(device="cpu"), limit=5)
    assert (done.status, done.conclusion) == ("completed", "success")
    found = {r.op: r for r in open_store(settings).results(device="cpu")}
    assert set(found) == {"softmax", "rms_norm", "mm", "log_softmax"}
    assert all(r.accuracy == 1.0 and r.vs_baseline is None for r in found.values())


def test_charts_are_capped_per_page_and_the_page_says_how_to_see_the_rest(tmp_path) -> None:
    from flagbot.bot.dashboard.view import MAX_CHARTS

    settings, client = app_for(tmp_path, dashboard_public=True)
    store = open_store(settings)
    store.add_results([KernelResult("o/r", 1, "d" * 40, "a_x100", f"op{i:02d}", "new", "pass",
                                    None, 0.9, 1.0, 1.0) for i in range(MAX_CHARTS + 2)])
    page = client.get("/dashboard").text
    assert page.count('<svg class="chart"') == 2 * MAX_CHARTS  # speed and accuracy each
    assert "2 more device/op pair(s)" in page and "op13" not in page
    assert client.get("/dashboard?device=b_y200").text.count("<svg") == 0


def test_in_redis_mode_the_page_lists_and_pages_the_ledger(tmp_path, request) -> None:
    url = request.getfixturevalue("redis_url")
    settings, client = app_for(tmp_path, dashboard_public=True, redis_url=url)
    ledger = open_ledger(settings)
    for i in range(DELIVERIES_PER_PAGE + 2):
        body = json.dumps({"number": 100 + i, "pull_request": {"number": 100 + i}}).encode()
        ledger.record(delivery_id=f"r-{i:03d}", event="pull_request", action="opened",
                      repo="flagos/FlagGems", payload=body, wanted=True)
        time.sleep(0.001)
    [newest] = ledger.recent(limit=1)
    assert newest.id == f"r-{DELIVERIES_PER_PAGE + 1:03d}" and newest.payload == b""
    assert ledger.oldest_waiting() is not None
    first, second = client.get("/dashboard").text, client.get("/dashboard?page=1").text
    assert f"#{100 + DELIVERIES_PER_PAGE + 1}" in first and "#101" not in first
    assert "#101" in second and "#100" in second


def test_redis_keeps_only_the_newest_ids_for_listing(tmp_path, request, monkeypatch) -> None:
    monkeypatch.setattr("flagbot.bot.store.redis.RECENT_MAX", 3)
    settings = Settings(state_dir=tmp_path, redis_url=request.getfixturevalue("redis_url"))
    ledger = open_ledger(settings)
    for i in range(5):
        ledger.record(delivery_id=f"k-{i}", event="push", action=None, repo="o/r", payload=b"{}",
                      wanted=False)
        time.sleep(0.001)
    assert [d.id for d in ledger.recent(limit=10)] == ["k-4", "k-3", "k-2"]
    assert ledger.get("k-0") is not None  # the row itself stays; only the listing forgets it


def test_recording_skips_dry_runs_and_never_fails_the_caller(tmp_path, caplog) -> None:
    from types import SimpleNamespace

    from flagbot.bot.dashboard import record

    request_id = "3-" + "e" * 40 + "-0000abcd-a_x100"
    settings = Settings(state_dir=tmp_path / "state")
    record.started(SimpleNamespace(dry_run=True, settings=settings, full_name="o/r"), request_id)
    assert not (tmp_path / "state" / "dashboard.db").exists()
    record.started(SimpleNamespace(dry_run=False, settings=settings, full_name="o/r"), request_id)
    assert [r.pr for r in open_store(settings).runs(RunFilter(), limit=5)] == [3]
    (tmp_path / "blocked").write_text("a file where the state folder should be")
    broken = SimpleNamespace(dry_run=False, settings=Settings(state_dir=tmp_path / "blocked"),
                             full_name="o/r")
    record.finished(broken, request_id, "success", report=b"{}")
    assert "dashboard: could not record run" in caplog.text


def test_a_run_without_a_report_in_time_is_recorded_timed_out(emu, settings) -> None:
    from testing.github_emulator.state import iso
    from tests.bot.devices_support import deliver_pr, device_repo, open_device_pr
    from tests.bot.handlers_support import bot_for

    repo = device_repo(emu)
    open_device_pr(emu, repo)
    [follow] = deliver_pr(emu, settings, repo)["follow_ups"]
    for cr in emu.state.repo(repo.full_name).check_runs.values():
        cr.started_at = iso(time.time() - 31 * 60)
    bot_for(settings).run(follow["id"], follow["event"], follow["payload"])
    [run_] = open_store(settings).runs(RunFilter(), limit=5)
    assert (run_.status, run_.conclusion) == ("completed", "timed_out")
    assert open_store(settings).results() == []


def test_a_dead_runner_s_run_ends_and_its_second_attempt_counts_as_a_retry(emu, settings) -> None:
    from tests.bot.devices_support import deliver_pr, deliver_run, device_repo, open_device_pr
    from tests.bot.test_devices_ci import end_dispatched

    repo = device_repo(emu)
    open_device_pr(emu, repo)
    deliver_pr(emu, settings, repo)
    [first] = emu.workflow_runs(repo)
    end_dispatched(emu, repo, first, None, "failure")
    assert deliver_run(emu, settings, repo, first["id"])["conclusion"] == "retried"
    again, old = open_store(settings).runs(RunFilter(), limit=5)
    assert (old.status, old.conclusion, old.run_id, old.retries) == ("completed", "failure",
                                                                     first["id"], 0)
    assert (again.status, again.retries, again.sha) == ("queued", 1, old.sha)
