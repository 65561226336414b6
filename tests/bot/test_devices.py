"""Kernel checks on device runners through the emulator: when runs start, trust, superseding,
results from artifacts (good, malformed, oversized, missing), timeouts, forged runs."""

from __future__ import annotations

import json
import random
import time

import pytest

from flagbot.bot.devices import artifact
from flagbot.bot.devices.ids import Request, Tracked
from testing.github_emulator.state import iso
from tests.bot.commands_support import comment, replies
from tests.bot.devices_support import (
    BACKEND,
    deliver_pr,
    deliver_run,
    device_repo,
    dispatched_run,
    dispatches,
    finish_run,
    kernel_runs,
    op,
    open_device_pr,
    report,
    zipped,
)
from tests.bot.handlers_support import bot_for


def test_a_ci_label_on_a_touching_pr_dispatches_the_workflow_with_its_inputs(emu, settings) -> None:
    repo = device_repo(emu)
    pr = open_device_pr(emu, repo)
    result = deliver_pr(emu, settings, repo)
    [body] = dispatches(emu)
    inputs = body["inputs"]
    assert body["ref"] == "main" and body["return_run_details"] is True
    assert inputs["device"] == "a_x100" and inputs["runner"] == '["self-hosted", "a_x100"]'
    assert inputs["sha"] == pr["head"]["sha"] and inputs["pr"] == "1"
    assert inputs["backend"] == "backends/_a_x100" and inputs["min_speedup"] == "1.25"
    request = Request.parse(inputs["request_id"])
    assert request is not None and (request.pr, request.sha, request.device) == (1, pr["head"]["sha"], "a_x100")
    [run] = emu.workflow_runs(repo)
    assert Request.from_title(run["display_title"]) == request
    [check] = kernel_runs(emu, repo, pr["head"]["sha"])
    assert check["status"] == "queued" and check["details_url"].endswith(f"/actions/runs/{run['id']}")
    tracked = Tracked.decode(check["external_id"])
    assert tracked is not None and tracked.run_id == run["id"]
    [follow] = result["follow_ups"]
    assert follow["event"] == "flagbot_deadline" and follow["delay_s"] == 30 * 60
    # a redelivery starts nothing more
    deliver_pr(emu, settings, repo, delivery="d-2")
    body = emu.comments(repo, 1)[0]["body"]
    assert len(dispatches(emu)) == 1 and "**Kernel checks**" in body and "| a_x100 | ⏳ queued" in body


def test_no_run_without_a_label_or_when_the_pr_touches_neither_backend_nor_kernels(emu, settings) -> None:
    repo = device_repo(emu)
    open_device_pr(emu, repo, labels=())
    deliver_pr(emu, settings, repo)
    open_device_pr(emu, repo, files={"docs.md": "x\n"}, branch="docs")
    deliver_pr(emu, settings, repo, number=2)
    assert dispatches(emu) == [] and emu.workflow_runs(repo) == []


def test_an_untrusted_author_waits_for_ok_to_test_of_that_sha(emu, settings) -> None:
    repo = device_repo(emu)
    pr = open_device_pr(emu, repo, user="mallory")
    deliver_pr(emu, settings, repo)
    assert dispatches(emu) == []
    [check] = kernel_runs(emu, repo, pr["head"]["sha"])
    assert check["conclusion"] == "action_required" and "/ok-to-test" in check["output"]["summary"]
    assert "needs-ok-to-test" in emu.issue_labels(repo, 1)
    comment(emu, settings, repo, "/ok-to-test", sender="mallory")  # a reader cannot approve
    assert dispatches(emu) == [] and "refused" in replies(emu, repo)[-1]
    comment(emu, settings, repo, "/ok-to-test", sender="maint")
    [body] = dispatches(emu)
    assert body["inputs"]["sha"] == pr["head"]["sha"]
    assert "needs-ok-to-test" not in emu.issue_labels(repo, 1)
    assert "approved head" in replies(emu, repo)[-1]
    # a new push by the untrusted author needs a new approval
    emu.push_commit(repo, branch="feature", files={BACKEND: "def softmax(x, dim):\n    return x + 0\n"})
    new = emu.update_pull_head(repo, 1)
    deliver_pr(emu, settings, repo, action="synchronize", delivery="d-2", before=pr["head"]["sha"])
    assert len(dispatches(emu)) == 1
    assert kernel_runs(emu, repo, new["head"]["sha"])[-1]["conclusion"] == "action_required"
    assert "needs-ok-to-test" in emu.issue_labels(repo, 1)


def test_check_command_runs_named_ops_and_refuses_readers_and_unknown_devices(emu, settings) -> None:
    repo = device_repo(emu)
    open_device_pr(emu, repo, labels=())
    comment(emu, settings, repo, "/check a_x100 softmax", sender="bob")
    assert dispatches(emu) == [] and "needs the `write` permission" in replies(emu, repo)[-1]
    comment(emu, settings, repo, "/check b_y200", sender="alice")
    assert "configured devices: `a_x100`, `cpu`" in replies(emu, repo)[-1]
    comment(emu, settings, repo, "/check a_x100 softmax mm", sender="alice")
    [body] = dispatches(emu)
    assert body["inputs"]["ops"] == "softmax,mm" and "started" in replies(emu, repo)[-1]
    comment(emu, settings, repo, "/check a_x100", sender="alice")
    assert len(dispatches(emu)) == 1 and "already running" in replies(emu, repo)[-1]


def test_a_push_cancels_the_old_heads_run(emu, settings) -> None:
    repo = device_repo(emu)
    pr = open_device_pr(emu, repo)
    deliver_pr(emu, settings, repo)
    [old_run] = emu.workflow_runs(repo)
    emu.push_commit(repo, branch="feature", files={BACKEND: "def softmax(x, dim):\n    return x + 0\n"})
    new = emu.update_pull_head(repo, 1)
    deliver_pr(emu, settings, repo, action="synchronize", delivery="d-2", before=pr["head"]["sha"])
    runs = emu.workflow_runs(repo)
    assert runs[0]["conclusion"] == "cancelled" and len(runs) == 2
    assert runs[1]["inputs"]["sha"] == new["head"]["sha"]
    [old_check] = kernel_runs(emu, repo, pr["head"]["sha"])
    assert old_check["conclusion"] == "cancelled" and "superseded" in old_check["output"]["title"]
    # the cancelled run's own completion changes nothing more
    deliver_run(emu, settings, repo, old_run["id"])
    assert kernel_runs(emu, repo, pr["head"]["sha"])[0]["conclusion"] == "cancelled"


def test_a_device_run_s_annotations_are_capped_like_every_check_run(emu, settings) -> None:
    settings = settings.with_overrides(max_annotations=2)
    repo = device_repo(emu)
    pr, run = dispatched_run(emu, settings, repo)
    failing = [op(name, "fail", source=f"ops/{name}.py", reason="accurate; too slow", speedup=1.0)
               for name in ("softmax", "rms_norm", "mm", "log_softmax")]
    finish_run(emu, repo, run["id"], report(failing, exit_code=1), conclusion="failure")
    deliver_run(emu, settings, repo, run["id"])
    [check] = kernel_runs(emu, repo, pr["head"]["sha"])
    assert len(check["output"]["annotations"]) == 2
    assert "2 more finding(s) are not annotated" in check["output"]["summary"]


def test_a_finished_run_gives_the_verdict_table_and_annotations(emu, settings) -> None:
    repo = device_repo(emu)
    pr, run = dispatched_run(emu, settings, repo)
    emu.set_workflow_run(repo, run["id"], "in_progress", labels=["self-hosted", "a_x100"])
    deliver_run(emu, settings, repo, run["id"], action="in_progress", event="workflow_job")
    assert kernel_runs(emu, repo, pr["head"]["sha"])[0]["status"] == "in_progress"
    doc = report([op("softmax"), op("rms_norm", "fail", source="ops/rms_norm.py",
                                    reason="accurate; speedup vs generic 1.10x < 1.25 in "
                                           "/home/runner/work/FlagGems/src/backends/_a_x100",
                                    speedup=1.1)], exit_code=1)
    finish_run(emu, repo, run["id"], doc, conclusion="failure")
    result = deliver_run(emu, settings, repo, run["id"])
    assert result["conclusion"] == "failure"
    [check] = kernel_runs(emu, repo, pr["head"]["sha"])
    out = check["output"]
    assert check["conclusion"] == "failure" and out["title"] == "1 of 2 op(s) failed"
    assert "| `softmax` | override | 1/1 |" in out["summary"] and "1.50x vs baseline" in out["summary"]
    assert "/home/runner" not in out["summary"] and "backends/_a_x100`" in out["summary"]
    [note] = out["annotations"]
    assert (note["path"], note["start_line"]) == ("backends/_a_x100/ops/rms_norm.py", 3)
    assert "❌ failure" in emu.comments(repo, 1)[0]["body"]
    # redelivered: nothing more is written
    before = len(emu.writes())
    deliver_run(emu, settings, repo, run["id"], delivery="again")
    assert len(emu.writes()) == before


def test_a_passing_report_succeeds(emu, settings) -> None:
    repo = device_repo(emu)
    pr, run = dispatched_run(emu, settings, repo)
    finish_run(emu, repo, run["id"], report([op("softmax")]))
    deliver_run(emu, settings, repo, run["id"])
    [check] = kernel_runs(emu, repo, pr["head"]["sha"])
    assert check["conclusion"] == "success" and check["output"]["title"] == "1 op(s) passed"


def test_a_report_with_other_thresholds_fails(emu, settings) -> None:
    repo = device_repo(emu)
    pr, run = dispatched_run(emu, settings, repo)
    finish_run(emu, repo, run["id"], report([op("softmax")], min_speedup=1.0))
    deliver_run(emu, settings, repo, run["id"])
    [check] = kernel_runs(emu, repo, pr["head"]["sha"])
    assert check["conclusion"] == "failure" and "other thresholds" in check["output"]["title"]


def _conclude_with(emu, settings, doc, conclusion="success") -> dict:
    repo = device_repo(emu)
    pr, run = dispatched_run(emu, settings, repo)
    finish_run(emu, repo, run["id"], doc, conclusion=conclusion)
    deliver_run(emu, settings, repo, run["id"])
    [check] = kernel_runs(emu, repo, pr["head"]["sha"])
    return check


def test_malformed_reports_fail_with_the_reason(emu, settings) -> None:
    bad = report([op("softmax")])
    bad["ops"][0]["verdict"]["status"] = "__import__('os')"
    check = _conclude_with(emu, settings, bad)
    assert check["conclusion"] == "failure" and check["output"]["title"] == "unusable report"
    assert "verdict.status" in check["output"]["summary"]


def test_not_json_and_wrong_schema_fail(emu, settings) -> None:
    check = _conclude_with(emu, settings, zipped({"report.json": b"{not json"}))
    assert check["output"]["title"] == "unusable report"


def test_a_missing_artifact_after_success_says_the_workflow_failed_with_a_link(emu, settings) -> None:
    # a run that ends `success` without a report is the workflow's fault, not a dead runner's
    check = _conclude_with(emu, settings, None, conclusion="success")
    assert check["conclusion"] == "failure" and check["output"]["title"] == "no report"
    assert "`success`" in check["output"]["summary"] and "/actions/runs/" in check["output"]["summary"]


def test_oversized_artifacts_are_not_downloaded(emu, settings, monkeypatch) -> None:
    monkeypatch.setattr(artifact, "MAX_ZIP_BYTES", 1000)
    noise = random.Random(0).randbytes(5000)  # does not compress: the zip is over 1000 bytes
    check = _conclude_with(emu, settings, zipped({"report.json": b"{}", "pad": noise}))
    assert check["output"]["title"] == "no report" and "over the limit" in check["output"]["summary"]
    assert not any("/artifacts/" in c.path and c.path.endswith("/zip") for c in emu.calls)


def test_a_zip_bomb_member_is_not_unpacked(emu, settings) -> None:
    check = _conclude_with(emu, settings, zipped({"report.json": b"0" * (5 * 1024 * 1024)}))
    assert check["output"]["title"] == "no report" and "over the limit" in check["output"]["summary"]


def test_a_run_with_no_report_in_time_times_out(emu, settings) -> None:
    repo = device_repo(emu)
    pr = open_device_pr(emu, repo)
    result = deliver_pr(emu, settings, repo)
    [follow] = result["follow_ups"]
    early = bot_for(settings).run(follow["id"], follow["event"], follow["payload"])
    assert early["check_run"] == "waiting" and early["follow_ups"][0]["delay_s"] > 60
    rs = emu.state.repo(repo.full_name)
    for cr in rs.check_runs.values():
        cr.started_at = iso(time.time() - 31 * 60)
    late = bot_for(settings).run(follow["id"] + "-late", follow["event"], follow["payload"])
    assert late["check_run"] == "timed_out" and late["workflow_cancelled"] is True
    [check] = kernel_runs(emu, repo, pr["head"]["sha"])
    assert check["conclusion"] == "timed_out" and "30 minutes" in check["output"]["summary"]
    assert emu.workflow_runs(repo)[0]["conclusion"] == "cancelled"


def test_a_look_alike_run_from_another_workflow_is_ignored(emu, settings) -> None:
    repo = device_repo(emu)
    pr, run = dispatched_run(emu, settings, repo)
    forged = emu.start_workflow_run(repo, "evil.yml", run["display_title"], event="pull_request")
    finish_run(emu, repo, forged, report([op("softmax")]))
    result = deliver_run(emu, settings, repo, forged)
    assert "belongs to run" in result["skipped"]
    assert kernel_runs(emu, repo, pr["head"]["sha"])[0]["status"] == "queued"


def test_an_unrelated_workflow_run_is_not_wanted() -> None:
    from flagbot.bot.dispatch import wants

    assert not wants("workflow_run", {"action": "completed", "workflow_run": {"display_title": "CI"}})
    assert not wants("workflow_job", {"action": "in_progress", "workflow_job": {"workflow_name": "CI"}})


def test_dispatch_refused_fails_the_check_run_with_the_reason(emu, settings) -> None:
    repo = device_repo(emu)
    pr = open_device_pr(emu, repo)
    emu.inject("POST", r".*/dispatches", 403, body={"message": "Resource not accessible by integration"})
    deliver_pr(emu, settings, repo)
    [check] = kernel_runs(emu, repo, pr["head"]["sha"])
    assert check["conclusion"] == "failure" and "Actions: write" in check["output"]["summary"]
    assert json.dumps(check["output"]).count("Resource not accessible") == 1


def test_a_compared_run_shows_head_vs_base_busy_devices_and_plots(emu, settings) -> None:
    repo = device_repo(emu)
    pr, run = dispatched_run(emu, settings, repo)
    assert run["inputs"]["base"] == pr["base"]["sha"]
    slow = op("mm", "fail", reason="regression: 0.77x the speed at abc (band 0.75-0.79)")
    slow["compare"] = {"ref": "abc", "status": "regression", "reason": "regression",
                       "value": {"median": 0.77, "low": 0.75, "high": 0.79}}
    same = op("softmax")
    same["compare"] = {"ref": "abc", "status": "same", "reason": "1.00x",
                       "value": {"median": 1.0, "low": 0.99, "high": 1.01}}
    doc = {**report([same, slow], exit_code=1), "schema_version": 3,
           "compare": {"ref": "abc", "sha": "a" * 40, "error": None},
           "health": {"busy": None}, "plots": ["mm.png", "softmax.png"]}
    finish_run(emu, repo, run["id"], doc, conclusion="failure")
    deliver_run(emu, settings, repo, run["id"])
    [check] = kernel_runs(emu, repo, pr["head"]["sha"])
    text = check["output"]["summary"]
    assert "| speed | vs base `abc` | verdict |" in text
    assert "| 1.00x same |" in text and "❌ 0.77x regression |" in text
    assert "`mm.png`, `softmax.png`" in text
    assert check["output"]["title"] == "1 of 2 op(s) failed"


def test_a_report_with_a_bad_plot_name_is_refused() -> None:
    from flagbot.bot.devices.report import ReportError, parse_report

    doc = {**report([op("softmax")]), "schema_version": 3, "plots": ["../../x.png"]}
    with pytest.raises(ReportError, match="plots"):
        parse_report(json.dumps(doc).encode())
