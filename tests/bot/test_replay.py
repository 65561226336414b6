"""Replays: the same delivery twice changes nothing the second time; `flagbot replay` prints actions."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from flagbot.bot.admin.replay import main
from flagbot.bot.devices.ids import Request
from flagbot.bot.dispatch import HANDLERS, wants
from flagbot.hooks.cli import main as cli_main
from flagbot.hooks.errors import UsageError
from tests.bot.commands_support import branch, example_pr
from tests.bot.devices_support import (
    deliver_pr,
    device_repo,
    finish_run,
    op,
    open_device_pr,
    report,
)
from tests.bot.handlers_support import bot_for, clean_backend, deliver, missing_patch_lines, open_pr


def test_second_run_of_same_delivery_writes_nothing(emu, settings, repo) -> None:
    pr = open_pr(emu, repo, {"hardwares/A_X100/README.md": "x\n", "torch/csrc/acc/Module.cpp": "// z\n",
                             "hardwares/hetero.txt": missing_patch_lines(60), **clean_backend("_amd")})
    first = deliver(emu, settings, repo, pr["number"])
    assert first["actions"]
    emu.reset_calls()
    second = deliver(emu, settings, repo, pr["number"])
    assert emu.writes() == []
    assert second["actions"] == []
    assert second["writes"] == {"flagbot / patches": "unchanged", "flagbot / backends": "unchanged",
                                "summary": "unchanged"}


def test_replay_cli_acts_on_github_and_prints_actions(emu, settings, repo, tmp_path, monkeypatch, capsys) -> None:
    pr = open_pr(emu, repo, {"hardwares/B_Y100/x.md": "x\n"})
    payload = tmp_path / "payload.json"
    payload.write_text(json.dumps(emu.payload(event="pull_request", action="opened", repo=repo, number=pr["number"])))
    for key, value in {"GITHUB_APP_ID": emu.app_id, "GITHUB_PRIVATE_KEY": emu.private_key_pem,
                       "GITHUB_API_URL": emu.url, "FLAGBOT_STATE_DIR": str(tmp_path / "st"),
                       "FLAGBOT_WRITE_SPACING_S": "0"}.items():
        monkeypatch.setenv(key, value)
    assert main([str(payload), "--event", "pull_request"]) == 0
    out = capsys.readouterr().out
    assert "label.add pr=1 names=['vendor: B_Y100']" in out
    assert emu.issue_labels(repo, pr["number"]) == ["vendor: B_Y100"]


def clone(emu, repo, tmp_path: Path) -> Path:
    dest = tmp_path / "checkout"
    subprocess.run(["git", "clone", "-q", repo.clone_url, str(dest)], check=True)
    subprocess.run(["git", "-C", str(dest), "fetch", "-q", "origin", "+refs/pull/*/head:refs/remotes/pr/*"], check=True)
    return dest


def test_dry_run_uses_local_checkout_and_writes_nothing_to_github(emu, repo, tmp_path, capsys) -> None:
    open_pr(emu, repo, {"hardwares/hetero.txt": missing_patch_lines(2), "torch_fl/x.py": "y = 1\n"})
    checkout = clone(emu, repo, tmp_path)
    payload = tmp_path / "p.json"
    payload.write_text(json.dumps(emu.payload(event="pull_request", action="synchronize", repo=repo, number=1)))
    emu.reset_calls()
    code = main([str(payload), "--event", "pull_request", "--repo", str(checkout), "--dry-run"])
    out = capsys.readouterr().out
    assert code == 1  # the patches check fails: hetero.txt lists patches that do not exist
    assert emu.calls == []
    assert "would do" in out and "label.add pr=1 names=['module: PrivateUse1']" in out
    assert "hardwares/hetero.txt:2: failure: [hetero-missing-patch]" in out
    assert subprocess.run(["git", "-C", str(checkout), "status", "--porcelain"], capture_output=True,
                          text=True).stdout == ""


def test_dry_run_reads_config_from_the_working_tree(emu, repo, tmp_path, capsys) -> None:
    open_pr(emu, repo, {"hardwares/A_X100/x.md": "x\n"})
    checkout = clone(emu, repo, tmp_path)
    (checkout / ".github").mkdir()
    (checkout / ".github/flagbot.yml").write_text("labels:\n  vendor:\n    pattern: 'hw: {device}'\n")
    payload = tmp_path / "p.json"
    payload.write_text(json.dumps(emu.payload(event="pull_request", action="opened", repo=repo, number=1)))
    assert main([str(payload), "--event", "pull_request", "--repo", str(checkout), "--dry-run"]) == 0
    assert "names=['hw: A_X100']" in capsys.readouterr().out


def test_unhandled_action_is_reported_and_exits_zero(emu, repo, tmp_path, capsys) -> None:
    open_pr(emu, repo, {"x.md": "x\n"})
    payload = tmp_path / "p.json"
    payload.write_text(json.dumps(emu.payload(event="pull_request", action="assigned", repo=repo, number=1)))
    assert main([str(payload), "--event", "pull_request", "--dry-run"]) == 0
    assert "nothing to do" in capsys.readouterr().out


@pytest.mark.parametrize("action,changes,wanted", [
    ("opened", None, True), ("synchronize", None, True), ("reopened", None, True),
    ("ready_for_review", None, True), ("edited", {"base": {"ref": {"from": "old"}}}, True),
    ("edited", {"title": {"from": "x"}}, False), ("closed", None, True), ("labeled", None, True),
])
def test_wants_pull_request_actions_and_only_base_edits(action, changes, wanted) -> None:
    payload = {"action": action, **({"changes": changes} if changes else {})}
    assert wants("pull_request", payload) is wanted


def test_wants_labels_set_by_people_only() -> None:
    assert not wants("pull_request", {"action": "labeled", "sender": {"type": "Bot"}})
    assert wants("pull_request", {"action": "unlabeled", "sender": {"type": "User"}})  # ciflow tags
    assert not wants("pull_request", {"action": "unlabeled", "sender": {"type": "Bot"}})
    assert not wants("pull_request", {"action": "assigned", "sender": {"type": "User"}})


def test_wants_nothing_for_events_without_a_handler() -> None:
    assert not wants("issue_comment", {"action": "created"})
    assert not wants("pull_request", [])  # type: ignore[arg-type]


def test_every_registered_handler_has_help_and_replay_lists_it(tmp_path) -> None:
    assert HANDLERS and all(h.help for h in HANDLERS.values())
    payload = tmp_path / "p.json"
    payload.write_text("{}")
    with pytest.raises(UsageError, match="pull_request: labels"):
        main([str(payload), "--event", "star", "--dry-run"])


def test_flagbot_replay_command_is_wired(emu, repo, tmp_path, capsys) -> None:
    open_pr(emu, repo, {"hardwares/A_X100/x.md": "x\n"})
    checkout = clone(emu, repo, tmp_path)
    payload = tmp_path / "p.json"
    payload.write_text(json.dumps(emu.payload(event="pull_request", action="opened", repo=repo, number=1)))
    assert cli_main(["-C", str(checkout), "replay", str(payload), "--event", "pull_request", "--dry-run"]) == 0
    assert "names=['vendor: A_X100']" in capsys.readouterr().out


def test_dry_run_with_a_relative_repo_from_the_shell(emu, repo, tmp_path) -> None:
    open_pr(emu, repo, {"hardwares/A_X100/x.md": "x\n"})
    checkout = clone(emu, repo, tmp_path)
    (checkout / "p.json").write_text(json.dumps(
        emu.payload(event="pull_request", action="opened", repo=repo, number=1)))
    proc = subprocess.run([sys.executable, "-m", "flagbot.hooks.cli", "replay", "p.json",
                           "--event", "pull_request", "--repo", ".", "--dry-run"],
                          cwd=checkout, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "names=['vendor: A_X100']" in proc.stdout


def test_broken_payload_file_is_a_usage_error(tmp_path, capsys) -> None:
    bad = tmp_path / "p.json"
    bad.write_text("{not json")
    assert cli_main(["replay", str(bad), "--event", "pull_request", "--dry-run"]) == 2
    assert "not valid JSON" in capsys.readouterr().err


def test_delivery_for_an_older_head_changes_nothing(emu, settings, repo) -> None:
    pr = open_pr(emu, repo, {"hardwares/A_X100/x.md": "x\n"})
    old = emu.payload(event="pull_request", action="opened", repo=repo, number=pr["number"])
    emu.push_commit(repo, branch="feature", files={"src/core.py": "x = 9\n"}, delete=["hardwares/A_X100/x.md"])
    emu.update_pull_head(repo, pr["number"])
    deliver(emu, settings, repo, pr["number"], action="synchronize")
    emu.reset_calls()
    result = bot_for(settings).run("late", "pull_request", old)
    assert result["superseded_by"] != old["pull_request"]["head"]["sha"]
    assert emu.writes() == []
    assert emu.issue_labels(repo, pr["number"]) == []


def test_real_replay_without_app_credentials_is_a_usage_error(tmp_path, monkeypatch, capsys) -> None:
    for key in ("GITHUB_APP_ID", "GITHUB_PRIVATE_KEY", "GITHUB_PRIVATE_KEY_PATH"):
        monkeypatch.delenv(key, raising=False)
    payload = tmp_path / "p.json"
    payload.write_text(json.dumps({"action": "opened", "pull_request": {}}))
    assert cli_main(["replay", str(payload), "--event", "pull_request"]) == 2
    assert "GITHUB_APP_ID" in capsys.readouterr().err


def test_real_replay_acts_on_github_as_the_app(emu, repo, tmp_path, monkeypatch, capsys) -> None:
    pr = open_pr(emu, repo, {"hardwares/A_X100/x.md": "x\n"})
    for key, value in (("GITHUB_APP_ID", emu.app_id), ("GITHUB_PRIVATE_KEY", emu.private_key_pem),
                       ("GITHUB_API_URL", emu.url), ("FLAGBOT_STATE_DIR", str(tmp_path / "state")),
                       ("FLAGBOT_WRITE_SPACING_S", "0")):
        monkeypatch.setenv(key, value)
    payload = tmp_path / "p.json"
    payload.write_text(json.dumps(emu.payload(event="pull_request", action="opened", repo=repo,
                                              number=pr["number"])))
    assert main([str(payload), "--event", "pull_request"]) == 0
    assert emu.issue_labels(repo, pr["number"]) == ["vendor: A_X100"]
    assert "did" in capsys.readouterr().out
    assert list((tmp_path / "state" / "locks").iterdir())  # run under the repository's lock



def test_dry_run_names_the_payload_commits_the_checkout_lacks(emu, repo, tmp_path) -> None:
    pr = open_pr(emu, repo, {"torch_fl/x.py": "y = 1\n"})
    unrelated = tmp_path / "unrelated"
    subprocess.run(["git", "init", "-q", str(unrelated)], check=True)
    subprocess.run(["git", "-C", str(unrelated), "commit", "-q", "--allow-empty", "-m", "x"], check=True)
    payload = tmp_path / "p.json"
    payload.write_text(json.dumps(emu.payload(event="pull_request", action="opened", repo=repo, number=1)))
    with pytest.raises(UsageError, match="are not in this checkout") as exc:
        main([str(payload), "--event", "pull_request", "--repo", str(unrelated), "--dry-run"])
    assert pr["head"]["sha"] in str(exc.value) and "fetch origin pull/1/head" in str(exc.value)


def comment_payload(emu, repo, tmp_path: Path, body: str, sender: str = "bob") -> tuple[Path, int]:
    """A person's comment on #1, saved as a payload file; (the file, the comment id)."""
    data = emu.payload(event="issue_comment", action="created", repo=repo, number=1, sender=sender,
                       body=body)
    path = tmp_path / "comment.json"
    path.write_text(json.dumps(data))
    return path, int(data["comment"]["id"])


def test_help_comment_replayed_dry_prints_the_reply_and_sends_nothing(emu, repo, tmp_path, capsys) -> None:
    open_pr(emu, repo, {"hardwares/A_X100/x.md": "x\n"})
    checkout = clone(emu, repo, tmp_path)
    payload, comment_id = comment_payload(emu, repo, tmp_path, "thanks!\n/help")
    emu.reset_calls()
    assert main([str(payload), "--event", "issue_comment", "--repo", str(checkout), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert emu.calls == []
    assert [c["user"]["login"] for c in emu.comments(repo, 1)] == ["bob"]
    assert "issue_comment.created: 2 action(s) would do" in out
    assert f"reaction.create comment={comment_id} content='eyes'" in out
    assert "comment.create pr=1" in out and "      | ✅ `/help`" in out
    assert "You (`bob`) have the `write` role here" in out
    assert "assumed: everyone has the 'write' role" in out
    assert "(refs/remotes/pr/1)" in out and "(refs/remotes/origin/main)" in out


def test_the_role_of_a_dry_run_commenter_is_an_option(emu, repo, tmp_path, capsys) -> None:
    emu.push_commit(repo, branch="main", files={".github/flagbot.yml": "commands:\n  unpatch: write\n"})
    open_pr(emu, repo, {"hardwares/A_X100/x.md": "x\n"})
    checkout = clone(emu, repo, tmp_path)
    payload, _ = comment_payload(emu, repo, tmp_path, "/unpatch A_X100 1234")
    assert main([str(payload), "--event", "issue_comment", "--repo", str(checkout), "--dry-run",
                 "--as-role", "read"]) == 0
    assert "`/unpatch` needs the `write` permission on this repository; `bob` has `read`" \
        in capsys.readouterr().out


def test_unpatch_comment_replayed_dry_records_the_push_and_makes_none(emu, tmp_path, capsys) -> None:
    repo, upstream = example_pr(emu, tmp_path)
    checkout = clone(emu, repo, tmp_path)
    refs_before = subprocess.run(["git", "-C", str(checkout), "show-ref"], capture_output=True,
                                 text=True, check=True).stdout
    b8 = upstream.base[:8]
    payload, _ = comment_payload(emu, repo, tmp_path, f"/unpatch A_X100 {b8}")
    emu.reset_calls()
    assert main([str(payload), "--event", "issue_comment", "--repo", str(checkout), "--dry-run"]) == 0
    out = capsys.readouterr().out
    name = f"unpatch/A_X100/{b8}"
    push = re.search(r"git\.push url='(.*)' refspecs=\['\+([0-9a-f]{40}):refs/heads/(.*)'\]", out)
    assert push and push.group(1) == repo.clone_url and push.group(3) == name
    assert f"`{name}` (not pushed: dry run)" in out
    assert "3 files changed, 5 insertions(+), 2 deletions(-)" in out
    # nothing reached the emulator, and the checkout has no new refs or files
    assert emu.calls == [] and branch(repo, name) is None
    assert subprocess.run(["git", "-C", str(checkout), "show-ref"], capture_output=True, text=True,
                          check=True).stdout == refs_before
    assert subprocess.run(["git", "-C", str(checkout), "status", "--porcelain"], capture_output=True,
                          text=True, check=True).stdout == ""


def finished_run(emu, settings, tmp_path: Path, *, action: str = "completed") -> tuple[Path, Path, dict]:
    """A dispatched device check whose run finished: (checkout, payload file, the PR)."""
    repo = device_repo(emu)
    pr = open_device_pr(emu, repo)
    deliver_pr(emu, settings, repo)
    [run] = emu.workflow_runs(repo)
    finish_run(emu, repo, run["id"], None)
    checkout = clone(emu, repo, tmp_path)
    payload = tmp_path / "run.json"
    payload.write_text(json.dumps(emu.payload(event="workflow_run", action=action, repo=repo,
                                              run_id=run["id"])))
    emu.reset_calls()
    return checkout, payload, pr


def test_workflow_run_replayed_dry_gives_the_reports_verdict(emu, settings, tmp_path, capsys) -> None:
    checkout, payload, pr = finished_run(emu, settings, tmp_path)
    doc = tmp_path / "report.json"
    doc.write_text(json.dumps(report([op("softmax")])))
    assert main([str(payload), "--event", "workflow_run", "--repo", str(checkout), "--dry-run",
                 "--report", str(doc)]) == 0
    out = capsys.readouterr().out
    assert emu.calls == []
    assert "check_run.update id=1 status='completed' conclusion='success' title='1 op(s) passed'" in out
    assert "  conclusion: success" in out
    assert f"assumed: 'flagbot / kernels (a_x100)' on {pr['head']['sha'][:12]} is queued" in out
    # without the report, the run is concluded as one that uploaded none
    assert main([str(payload), "--event", "workflow_run", "--repo", str(checkout), "--dry-run"]) == 1
    out = capsys.readouterr().out
    assert "title='no report'" in out and "uploaded no report artifact" in out


def test_workflow_run_in_progress_replayed_dry_starts_the_check_run(emu, settings, tmp_path, capsys) -> None:
    checkout, payload, _ = finished_run(emu, settings, tmp_path, action="in_progress")
    payload.write_text(payload.read_text().replace('"status": "completed"', '"status": "in_progress"'))
    assert main([str(payload), "--event", "workflow_run", "--repo", str(checkout), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "check_run.update id=1 status='in_progress'" in out and "check_run: in_progress" in out


def test_a_foreign_workflow_run_replayed_dry_is_skipped_with_the_reason(emu, settings, tmp_path, capsys) -> None:
    checkout, payload, _ = finished_run(emu, settings, tmp_path)
    data = json.loads(payload.read_text())
    data["workflow_run"]["event"] = "pull_request"
    payload.write_text(json.dumps(data))
    assert main([str(payload), "--event", "workflow_run", "--repo", str(checkout), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "0 action(s) would do" in out and "skipped: not a run of the configured workflow" in out


def test_workflow_job_and_the_deadline_are_refused_with_what_is_needed(emu, settings, tmp_path) -> None:
    repo = device_repo(emu)
    open_device_pr(emu, repo)
    deliver_pr(emu, settings, repo)
    [run] = emu.workflow_runs(repo)
    emu.set_workflow_run(repo, run["id"], "in_progress", labels=["self-hosted", "a_x100"])
    checkout = clone(emu, repo, tmp_path)
    job = tmp_path / "job.json"
    job.write_text(json.dumps(emu.payload(event="workflow_job", action="in_progress", repo=repo,
                                          run_id=run["id"])))
    with pytest.raises(UsageError, match="only GitHub can look the run up") as exc:
        main([str(job), "--event", "workflow_job", "--repo", str(checkout), "--dry-run"])
    assert "workflow_run payload" in (exc.value.hint or "")
    deadline = tmp_path / "deadline.json"
    deadline.write_text(json.dumps({"request": Request.from_title(run["display_title"]).id}))
    for extra in (["--dry-run"], []):
        with pytest.raises(UsageError, match="the worker's own follow-up"):
            main([str(deadline), "--event", "flagbot_deadline", "--repo", str(checkout), *extra])


def test_dry_run_options_without_dry_run_are_usage_errors(tmp_path, capsys) -> None:
    payload = tmp_path / "p.json"
    payload.write_text(json.dumps({"action": "created", "comment": {"body": "/help", "user": {"login": "x"}}}))
    assert cli_main(["replay", str(payload), "--event", "issue_comment", "--head", "HEAD",
                     "--as-role", "admin"]) == 2
    assert "--head, --as-role: only used with --dry-run" in capsys.readouterr().err


def test_dry_run_options_of_another_event_are_usage_errors(tmp_path) -> None:
    payload = tmp_path / "p.json"
    payload.write_text(json.dumps({"action": "opened", "pull_request": {}}))
    with pytest.raises(UsageError, match="--base, --report: not used for --event pull_request"):
        main([str(payload), "--event", "pull_request", "--repo", str(Path(__file__).resolve().parents[2]),
              "--dry-run", "--base", "HEAD", "--report", "r.json"])
