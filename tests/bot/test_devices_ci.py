"""Device CI at scale, against the emulator: tag dispatch (ciflow tags), one automatic retry for
dead runners, `/retest`, quarantined ops, failures inherited from the base, runner metrics."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from prometheus_client import REGISTRY

from flagbot.bot.devices import results
from flagbot.bot.devices.ids import Request, Tracked
from flagbot.bot.devices.plan import devices, rules
from flagbot.bot.devices.report import parse_report
from flagbot.bot.devices.tag_inputs import outputs
from flagbot.bot.monitoring.metrics import render
from flagbot.hooks.config import parse_config
from testing.github_emulator import gitstore
from testing.github_emulator.state import CheckRun, iso
from tests.bot.commands_support import comment, replies
from tests.bot.devices_support import (
    BACKEND,
    CONFIG,
    deliver_pr,
    deliver_run,
    device_repo,
    dispatched_run,
    dispatches,
    kernel_runs,
    op,
    open_device_pr,
    report,
    zipped,
)
from tests.bot.handlers_support import bot_for

ROOT = Path(__file__).resolve().parents[2]
TAG_WORKFLOW = (ROOT / ".github/workflows/device-check-tag.yml").read_text(encoding="utf-8")
TAG_CONFIG = CONFIG + "  dispatch: tag\n  workflow: device-check-tag.yml\n"
TWO_DEVICES = CONFIG.replace("  cpu:\n    runner: local\n    backend: backends/_nvidia\n",
                             "  b_y200:\n    runner: [self-hosted, b_y200]\n    backend: backends/_a_x100\n")


def tag_repo(emu, config: str = TAG_CONFIG):
    return device_repo(emu, config, extra={".github/workflows/device-check-tag.yml": TAG_WORKFLOW})


def tag_sha(repo, name: str) -> str | None:
    return gitstore.rev_parse(repo.bare_path, f"refs/tags/{name}")


def upload(emu, repo, run: dict, doc: dict | None, conclusion: str, artifact: str) -> None:
    """The runner ends `run` with `conclusion`, having uploaded `doc` as `artifact` (None: nothing)."""
    if doc is not None:
        emu.add_artifact(repo, run["id"], artifact, zipped({"report.json": json.dumps(doc).encode()}))
    emu.set_workflow_run(repo, run["id"], "completed", conclusion)


def end_dispatched(emu, repo, run: dict, doc: dict | None, conclusion: str = "success") -> None:
    request = Request.from_title(run["display_title"])
    assert request is not None
    upload(emu, repo, run, doc, conclusion, request.artifact)


def metric(name: str, device: str) -> float:
    return REGISTRY.get_sample_value(name, {"device": device}) or 0.0


# -- tag dispatch ---------------------------------------------------------------------------


def test_tag_dispatch_creates_moves_and_deletes_the_ciflow_tag(emu, settings) -> None:
    repo = tag_repo(emu)
    pr = open_device_pr(emu, repo)
    head = pr["head"]["sha"]
    result = deliver_pr(emu, settings, repo)
    assert result["kernels"]["kernels"] == {"a_x100": "dispatched"} and dispatches(emu) == []
    assert tag_sha(repo, "ciflow/a_x100/1") == head
    [run] = emu.workflow_runs(repo)  # the emulator started the tag workflow from the tagged tree
    assert (run["event"], run["head_branch"], run["head_sha"]) == ("push", "ciflow/a_x100/1", head)
    [check] = kernel_runs(emu, repo, head)
    tracked = Tracked.decode(check["external_id"])
    assert check["status"] == "queued" and tracked is not None and tracked.by_tag and tracked.run_id is None
    # the run is matched by tag, head sha and workflow; its report decides
    emu.set_workflow_run(repo, run["id"], "in_progress", labels=["ubuntu-latest"])
    assert deliver_run(emu, settings, repo, run["id"], action="in_progress")["check_run"] == "run recorded"
    [check] = kernel_runs(emu, repo, head)
    assert check["status"] == "queued" and Tracked.decode(check["external_id"]).run_id == run["id"]
    emu.set_workflow_run(repo, run["id"], "in_progress", labels=["self-hosted", "a_x100"])
    job = deliver_run(emu, settings, repo, run["id"], action="in_progress", event="workflow_job")
    assert job["check_run"] == "in_progress"
    upload(emu, repo, run, report([op("softmax")]), "success", f"flagbot-kernels-a_x100-1-{head}")
    assert deliver_run(emu, settings, repo, run["id"])["conclusion"] == "success"
    # a force-push that is no descendant moves the tag (force) and starts the new head's run
    emu.push_commit(repo, branch="other", files={BACKEND: "def softmax(x, dim):\n    return x + 0\n"})
    gitstore.update_ref(repo.bare_path, "refs/heads/feature", gitstore.rev_parse(repo.bare_path, "refs/heads/other"))
    new = emu.update_pull_head(repo, 1)["head"]["sha"]
    assert not gitstore.is_ancestor(repo.bare_path, head, new)
    deliver_pr(emu, settings, repo, action="synchronize", delivery="d-2", before=head)
    assert tag_sha(repo, "ciflow/a_x100/1") == new
    assert [r["head_sha"] for r in emu.workflow_runs(repo)] == [head, new]
    moves = [c for c in emu.writes() if c.method == "PATCH" and "/git/refs/tags/ciflow" in c.path]
    assert len(moves) == 1 and moves[0].json["force"] is True  # type: ignore[index]
    # closing deletes it
    emu.close_pull(repo, 1)
    closed = deliver_pr(emu, settings, repo, action="closed", delivery="d-3")
    assert closed["tags_deleted"] == ["a_x100"] and tag_sha(repo, "ciflow/a_x100/1") is None


def test_unlabelling_deletes_the_tag_and_check_again_re_creates_it(emu, settings) -> None:
    repo = tag_repo(emu)
    pr, run = dispatched_run(emu, settings, repo)
    upload(emu, repo, run, report([op("softmax")]), "success", f"flagbot-kernels-a_x100-1-{pr['head']['sha']}")
    deliver_run(emu, settings, repo, run["id"])
    comment(emu, settings, repo, "/check a_x100 softmax", sender="alice")
    assert "a tag carries no inputs" in replies(emu, repo)[-1] and len(emu.workflow_runs(repo)) == 1
    # `/check` on the same head: the tag already names it, so it is deleted and pushed again
    comment(emu, settings, repo, "/check a_x100", sender="alice")
    assert len(emu.workflow_runs(repo)) == 2 and "re-created" in replies(emu, repo)[-1]
    payload = emu.payload(event="pull_request", action="unlabeled", repo=repo, number=1, sender="alice",
                          label={"name": "ci: a_x100"})
    done = bot_for(settings).run("d-unlabel", "pull_request", payload)
    assert done["tags_deleted"] == ["a_x100"] and tag_sha(repo, "ciflow/a_x100/1") is None


def test_a_stale_tag_run_for_an_older_request_is_not_taken(emu, settings) -> None:
    repo = tag_repo(emu)
    pr, run = dispatched_run(emu, settings, repo)
    emu.state.repo(repo.full_name).workflow_runs[run["id"]].created_at = iso(time.time() - 3600)
    upload(emu, repo, run, report([op("softmax")]), "success", f"flagbot-kernels-a_x100-1-{pr['head']['sha']}")
    assert "older" in deliver_run(emu, settings, repo, run["id"])["skipped"]
    assert kernel_runs(emu, repo, pr["head"]["sha"])[0]["status"] == "queued"


def test_tag_inputs_match_what_a_dispatch_sends(tmp_path) -> None:
    sha = "ab" * 20
    found = outputs("ciflow/a_x100/7", CONFIG, sha)
    assert found["runner"] == '["self-hosted", "a_x100"]' and found["backend"] == "backends/_a_x100"
    assert found["min_speedup"] == "1.25" and found["artifact"] == f"flagbot-kernels-a_x100-7-{sha}"
    config = tmp_path / "flagbot.yml"
    config.write_text(CONFIG, encoding="utf-8")
    cli = [sys.executable, "-m", "flagbot.bot.devices.tag_inputs"]
    ok = subprocess.run([*cli, "ciflow/a_x100/7", str(config), sha], capture_output=True, text=True, check=False)
    assert ok.returncode == 0 and "pr=7\n" in ok.stdout
    for bad in (["ciflow/cpu/7", str(config), sha], ["ciflow/nope/7", str(config), sha],
                ["main", str(config), sha], ["ciflow/a_x100/7", str(config), "x\nrunner=evil"]):
        refused = subprocess.run([*cli, *bad], capture_output=True, text=True, check=False)
        assert refused.returncode == 2 and refused.stdout == "" and "nothing to run" in refused.stderr


# -- one retry for dead runners ----------------------------------------------------------------


def test_a_run_without_a_report_is_dispatched_again_exactly_once(emu, settings) -> None:
    repo = device_repo(emu)
    pr = open_device_pr(emu, repo)
    head = pr["head"]["sha"]
    deliver_pr(emu, settings, repo)
    retries = metric("flagbot_device_retries_total", "a_x100")
    [first] = emu.workflow_runs(repo)
    emu.set_workflow_run(repo, first["id"], "in_progress", labels=["self-hosted", "a_x100"], runner="gpu-07")
    end_dispatched(emu, repo, first, None, "failure")
    retried = deliver_run(emu, settings, repo, first["id"])
    assert retried["conclusion"] == "retried"
    [follow] = retried["follow_ups"]  # the new request's own deadline
    assert follow["event"] == "flagbot_deadline" and follow["payload"]["request"] != Request.from_title(
        first["display_title"]).id
    [check] = kernel_runs(emu, repo, head)
    assert check["status"] == "queued" and "attempt 2 of 2" in check["output"]["title"]
    assert f"/actions/runs/{first['id']}" in check["output"]["summary"]
    assert "(runner `gpu-07`)" in check["output"]["summary"]
    assert metric("flagbot_device_retries_total", "a_x100") == retries + 1
    [_, body] = dispatches(emu)
    assert body["inputs"]["sha"] == head
    # the first run's completion delivered again changes nothing
    assert "skipped" in deliver_run(emu, settings, repo, first["id"], delivery="again")
    assert len(dispatches(emu)) == 2
    second = emu.workflow_runs(repo)[1]
    emu.set_workflow_run(repo, second["id"], "in_progress", labels=["self-hosted", "a_x100"], runner="gpu-11")
    end_dispatched(emu, repo, second, None, "timed_out")
    assert deliver_run(emu, settings, repo, second["id"])["conclusion"] == "failure"
    [check] = kernel_runs(emu, repo, head)
    assert check["conclusion"] == "failure" and check["output"]["title"].startswith("runner failure")
    summary = check["output"]["summary"]
    assert "Runner failure" in summary and f"/actions/runs/{first['id']}" in summary
    assert "(runner `gpu-07`) ended `failure`" in summary, summary
    assert "(runner `gpu-11`) ended `timed_out`" in summary
    assert f"/actions/runs/{second['id']}" in summary and check["details_url"].endswith(str(second["id"]))
    assert len(dispatches(emu)) == 2  # never a third


def test_a_run_that_uploaded_a_report_is_never_retried(emu, settings) -> None:
    repo = device_repo(emu)
    pr, run = dispatched_run(emu, settings, repo)
    end_dispatched(emu, repo, run, report([op("softmax", "fail", ok=False, reason="inaccurate")], exit_code=1),
                   "failure")
    assert deliver_run(emu, settings, repo, run["id"])["conclusion"] == "failure"
    assert len(dispatches(emu)) == 1
    [check] = kernel_runs(emu, repo, pr["head"]["sha"])
    assert check["output"]["title"] == "1 of 1 op(s) failed"


def test_a_bad_artifact_fails_without_a_retry(emu, settings) -> None:
    repo = device_repo(emu)
    pr, run = dispatched_run(emu, settings, repo)
    request = Request.from_title(run["display_title"])
    emu.add_artifact(repo, run["id"], request.artifact, b"not a zip")
    emu.set_workflow_run(repo, run["id"], "completed", "failure")
    deliver_run(emu, settings, repo, run["id"])
    [check] = kernel_runs(emu, repo, pr["head"]["sha"])
    assert check["conclusion"] == "failure" and check["output"]["title"] == "no report"
    assert len(dispatches(emu)) == 1


# -- /retest --------------------------------------------------------------------------------------


def test_retest_runs_only_the_failed_device_of_two(emu, settings) -> None:
    repo = device_repo(emu, TWO_DEVICES)
    open_device_pr(emu, repo, labels=("ci: a_x100", "ci: b_y200"))
    deliver_pr(emu, settings, repo)
    runs = {r["inputs"]["device"]: r for r in emu.workflow_runs(repo)}
    end_dispatched(emu, repo, runs["a_x100"], report([op("softmax")]))
    end_dispatched(emu, repo, runs["b_y200"], report([op("softmax", "fail", ok=False, reason="bad")], exit_code=1),
                   "failure")
    for run in runs.values():
        deliver_run(emu, settings, repo, run["id"])
    comment(emu, settings, repo, "/retest", sender="bob")
    assert len(dispatches(emu)) == 2 and "needs the `write` permission" in replies(emu, repo)[-1]
    comment(emu, settings, repo, "/retest", sender="alice")
    assert [d["inputs"]["device"] for d in dispatches(emu)][2:] == ["b_y200"]
    assert "`a_x100`: success, left alone" in replies(emu, repo)[-1]
    comment(emu, settings, repo, "/retest a_x100", sender="alice")  # named, but it passed
    assert len(dispatches(emu)) == 3 and "nothing to run again" in replies(emu, repo)[-1]
    comment(emu, settings, repo, "/retest zz_top", sender="alice")
    assert "configured devices" in replies(emu, repo)[-1]


# -- quarantine and inherited failures -------------------------------------------------------


def test_a_quarantined_ops_failure_leaves_the_check_passing(emu, settings) -> None:
    repo = device_repo(emu, CONFIG + "  quarantine:\n    a_x100: [rms_norm]\n")
    pr, run = dispatched_run(emu, settings, repo)
    doc = report([op("softmax"), op("rms_norm", "fail", ok=False, reason="inaccurate", source="ops/rms_norm.py")],
                 exit_code=1)
    end_dispatched(emu, repo, run, doc, "failure")
    deliver_run(emu, settings, repo, run["id"])
    [check] = kernel_runs(emu, repo, pr["head"]["sha"])
    assert check["conclusion"] == "success" and "quarantined" in check["output"]["title"]
    assert "**fail** (quarantined) |" in check["output"]["summary"]
    assert [a["annotation_level"] for a in check["output"]["annotations"]] == ["warning"]
    # the failure is still recorded for later comparisons with this run
    assert results.failed_ops(check["output"]["summary"]) == {"rms_norm"}


def base_run(emu, repo, failing: list[str]) -> str:
    """The tip of main with a completed a_x100 kernels check run that failed `failing`, its
    output rendered by the bot's own `results.from_report`."""
    tip = gitstore.rev_parse(repo.bare_path, "refs/heads/main")
    assert tip is not None
    config = parse_config(CONFIG)
    device = devices(config)["a_x100"]
    doc = report([op(n, "fail", ok=False, reason="inaccurate") for n in failing] + [op("mm")], exit_code=1)
    result = results.from_report(parse_report(json.dumps(doc).encode()), device, rules(config), None)
    with emu.state.lock:
        cr = CheckRun(emu.state.next_id(), device.check_name, tip, "completed", result.conclusion, iso(), iso(),
                      output={"title": result.title, "summary": result.summary})
        emu.state.repo(repo.full_name).check_runs[cr.id] = cr
    return tip


def test_an_op_failing_on_head_and_base_is_inherited_and_neutral(emu, settings) -> None:
    repo = device_repo(emu)
    tip = base_run(emu, repo, ["softmax"])
    pr, run = dispatched_run(emu, settings, repo)
    end_dispatched(emu, repo, run, report([op("softmax", "fail", ok=False, reason="inaccurate"), op("mm")],
                                          exit_code=1), "failure")
    assert deliver_run(emu, settings, repo, run["id"])["conclusion"] == "neutral"
    [check] = kernel_runs(emu, repo, pr["head"]["sha"])
    out = check["output"]
    assert "inherited" in out["title"] and "**fail** (inherited) |" in out["summary"]
    assert f"`{tip[:12]}`" in out["summary"] and "did not break them" in out["summary"]
    assert "| a_x100 | ➖ neutral: 1 op(s) fail on the base branch too (inherited)" in emu.comments(repo, 1)[0]["body"]


def test_a_new_failure_beside_an_inherited_one_fails(emu, settings) -> None:
    repo = device_repo(emu)
    base_run(emu, repo, ["softmax"])
    pr, run = dispatched_run(emu, settings, repo)
    end_dispatched(emu, repo, run, report([op("softmax", "fail", ok=False, reason="inaccurate"),
                                           op("mm", "fail", ok=False, reason="inaccurate")], exit_code=1),
                   "failure")
    deliver_run(emu, settings, repo, run["id"])
    [check] = kernel_runs(emu, repo, pr["head"]["sha"])
    assert check["conclusion"] == "failure" and check["output"]["title"] == "1 of 2 op(s) failed (1 more excused)"
    assert "**fail** (inherited) |" in check["output"]["summary"]


def test_without_a_base_run_a_failure_is_the_pull_requests(emu, settings) -> None:
    repo = device_repo(emu)
    pr, run = dispatched_run(emu, settings, repo)
    end_dispatched(emu, repo, run, report([op("softmax", "fail", ok=False, reason="inaccurate")], exit_code=1),
                   "failure")
    deliver_run(emu, settings, repo, run["id"])
    [check] = kernel_runs(emu, repo, pr["head"]["sha"])
    assert check["conclusion"] == "failure" and "inherited" not in check["output"]["summary"]


# -- runner metrics -------------------------------------------------------------------------------


def test_runner_metrics_count_queue_time_running_time_and_timeouts(emu, settings) -> None:
    repo = device_repo(emu)
    pr = open_device_pr(emu, repo)
    deliver_pr(emu, settings, repo)
    queued = metric("flagbot_device_queued_seconds_count", "a_x100")
    running = metric("flagbot_device_running_seconds_count", "a_x100")
    timeouts = metric("flagbot_device_timeouts_total", "a_x100")
    [run] = emu.workflow_runs(repo)
    emu.set_workflow_run(repo, run["id"], "in_progress", labels=["self-hosted", "a_x100"])
    deliver_run(emu, settings, repo, run["id"], action="in_progress", event="workflow_job")
    assert metric("flagbot_device_queued_seconds_count", "a_x100") == queued + 1
    assert Tracked.decode(kernel_runs(emu, repo, pr["head"]["sha"])[0]["external_id"]).progress_at
    end_dispatched(emu, repo, run, report([op("softmax")]), "timed_out")
    deliver_run(emu, settings, repo, run["id"])
    assert metric("flagbot_device_running_seconds_count", "a_x100") == running + 1
    assert metric("flagbot_device_timeouts_total", "a_x100") == timeouts + 1
    text = render().decode()
    assert 'flagbot_device_queued_seconds_bucket{device="a_x100"' in text
    assert 'flagbot_device_retries_total' in text


def test_the_bots_own_unlabel_is_not_wanted_and_ci_config_is_valid() -> None:
    from flagbot.bot import interest

    person = {"action": "unlabeled", "sender": {"login": "alice", "type": "User"}}
    assert interest.wanted("pull_request", person)
    assert not interest.wanted("pull_request", {**person, "sender": {"login": "flagbot[bot]", "type": "Bot"}})
    config = parse_config(TAG_CONFIG + "  quarantine:\n    a_x100: [rms_norm]\n")
    rule = rules(config)
    assert rule.by_tag and rule.quarantined("a_x100") == {"rms_norm"} and rule.quarantined("cpu") == set()


def test_the_tag_workflows_hosted_plan_job_does_not_start_the_check_run(emu, settings) -> None:
    repo = tag_repo(emu)
    pr, run = dispatched_run(emu, settings, repo)
    emu.set_workflow_run(repo, run["id"], "in_progress", labels=["ubuntu-latest"])
    skipped = deliver_run(emu, settings, repo, run["id"], action="in_progress", event="workflow_job",
                          delivery="job-plan")
    assert "not on the device's runners" in skipped["skipped"]
    assert kernel_runs(emu, repo, pr["head"]["sha"])[0]["status"] == "queued"
    emu.set_workflow_run(repo, run["id"], "in_progress", labels=["self-hosted", "a_x100"])
    started = deliver_run(emu, settings, repo, run["id"], action="in_progress", event="workflow_job",
                          delivery="job-check")
    assert started["check_run"] == "in_progress" and started["runner"] == "runner-1"


def test_without_actions_write_a_superseded_tag_run_is_left_to_its_concurrency_group(emu, settings) -> None:
    repo = tag_repo(emu)
    pr = open_device_pr(emu, repo, labels=())
    comment(emu, settings, repo, "/check a_x100", sender="alice")  # started by /check, no label
    [run] = emu.workflow_runs(repo)
    emu.inject("POST", rf"/repos/{repo.full_name}/actions/runs/\d+/cancel", 403, times=1,
               body={"message": "Resource not accessible by integration"})
    emu.push_commit(repo, branch="feature", files={BACKEND: "def softmax(x, dim):\n    return x + 0\n"})
    emu.update_pull_head(repo, 1)
    result = deliver_pr(emu, settings, repo, action="synchronize", delivery="d-2", before=pr["head"]["sha"])
    assert result["kernels"]["cancelled"] == ["a_x100"]
    assert kernel_runs(emu, repo, pr["head"]["sha"])[0]["conclusion"] == "cancelled"
    assert emu.workflow_runs(repo)[0]["status"] == "queued"  # refused: GitHub's concurrency ends it
    assert any(c.path.endswith(f"/actions/runs/{run['id']}/cancel") and c.status == 403 for c in emu.calls)


def test_tracked_keeps_attempt_progress_previous_run_and_mode_and_refuses_garbage() -> None:
    request = Request.new(3, "c" * 40, "a_x100")
    full = Tracked(request.id, 9, ("softmax",), "queued", 2, 1_700_000_000, (8, "timed_out"), True)
    assert Tracked.decode(full.encode()) == full
    plain = Tracked(request.id)
    assert plain.encode().count(" ") == 4 and Tracked.decode(plain.encode()) == plain
    for bad in (full.encode() + " x=1 y=2 z=3 w=4", full.encode().replace("queued", "lost"),
                "fbk1 nope - - queued", ""):
        assert Tracked.decode(bad) is None
    odd = Tracked.decode(f"fbk1 {request.id} - - queued a=999 p=abc prev=1:bad-word")
    assert odd is not None and (odd.attempt, odd.progress_at, odd.prev) == (1, None, None)


def test_tag_dispatch_keeps_the_per_sha_trust_gate(emu, settings) -> None:
    repo = tag_repo(emu)
    pr = open_device_pr(emu, repo, user="mallory")
    deliver_pr(emu, settings, repo)
    assert tag_sha(repo, "ciflow/a_x100/1") is None and emu.workflow_runs(repo) == []
    assert kernel_runs(emu, repo, pr["head"]["sha"])[-1]["conclusion"] == "action_required"
    comment(emu, settings, repo, "/ok-to-test", sender="maint")
    assert tag_sha(repo, "ciflow/a_x100/1") == pr["head"]["sha"] and len(emu.workflow_runs(repo)) == 1
    # a new push by the untrusted author moves nothing until approved again
    emu.push_commit(repo, branch="feature", files={BACKEND: "def softmax(x, dim):\n    return x + 0\n"})
    new = emu.update_pull_head(repo, 1)["head"]["sha"]
    deliver_pr(emu, settings, repo, action="synchronize", delivery="d-2", before=pr["head"]["sha"])
    assert tag_sha(repo, "ciflow/a_x100/1") == pr["head"]["sha"] and len(emu.workflow_runs(repo)) == 1
    assert kernel_runs(emu, repo, new)[-1]["conclusion"] == "action_required"


def test_the_failed_ops_marker_is_bounded_and_read_back() -> None:
    marker = results.FAILED_MARK.format(ops=",".join(f"op_{i:03d}" for i in range(results.MAX_MARKED)))
    assert results.failed_ops("text\n" + marker) == {f"op_{i:03d}" for i in range(results.MAX_MARKED)}
    assert results.failed_ops(results.FAILED_MARK.format(ops="")) == frozenset()
    assert results.failed_ops("no marker") is None
    assert results.failed_ops("<!-- flagbot-failed-ops: a-->b --> -->") is None
