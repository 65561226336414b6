"""Webhook payloads shaped like GitHub's documented ones, built from the emulator's state."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from testing.github_emulator import rest, rest_app, routes_actions
from testing.github_emulator.state import Comment, Issue, RepoState, WorkflowRun

if TYPE_CHECKING:
    from testing.github_emulator.emulator import Emulator

ZEN = "Design for failure."


def _common(emu: Emulator, rs: RepoState, sender: str) -> dict[str, Any]:
    parent = emu.state.repo(rs.repo.fork_of) if rs.repo.fork_of else None
    return {
        "repository": rest.repo(emu.urls, rs.repo, parent.repo if parent else None),
        "sender": rest.user(emu.urls, sender),
        "installation": {"id": emu.installation_id, "node_id": rest.node_id("Installation", emu.installation_id)},
    }


def pull_request(emu: Emulator, action: str, rs: RepoState, it: Issue, sender: str,
                 extra: dict[str, Any]) -> dict[str, Any]:
    """`pull_request` event: action, number, pull_request, repository, sender, installation (+ extra)."""
    head = emu.state.repo(it.head_repo)
    st = emu.state
    pr = rest.pull(emu.urls, rs, it, head.repo if head else rs.repo, st.pr_files(rs, it), st.pr_commits(rs, it))
    body: dict[str, Any] = {"action": action, "number": it.number, "pull_request": pr}
    if action == "synchronize":
        body["before"] = extra.pop("before", it.base_sha)
        body["after"] = it.head_sha
    body.update(extra)
    body.update(_common(emu, rs, sender))
    return body


def issue_comment(emu: Emulator, action: str, rs: RepoState, it: Issue, comment: Comment, sender: str,
                  extra: dict[str, Any]) -> dict[str, Any]:
    """`issue_comment` event: action, issue (with pull_request for PRs), comment, repository, sender."""
    body: dict[str, Any] = {
        "action": action,
        "issue": rest.issue(emu.urls, rs, it),
        "comment": rest.comment(emu.urls, rs.repo, comment, rs.permissions),
    }
    body.update(extra)
    body.update(_common(emu, rs, sender))
    return body


def check_run(emu: Emulator, action: str, rs: RepoState, run_id: int, sender: str,
              extra: dict[str, Any]) -> dict[str, Any]:
    """`check_run` event (e.g. `rerequested`) for an existing run."""
    cr = rs.check_runs[run_id]
    run = rest_app.check_run(emu.urls, rs.repo, cr)
    prs = [it for it in rs.issues.values() if it.is_pull and it.head_sha == cr.head_sha]
    run["check_suite"].update(head_sha=cr.head_sha, head_branch=prs[0].head_ref if prs else None)
    run["pull_requests"] = [
        {"number": it.number, "url": f"{emu.url}/repos/{rs.repo.full_name}/pulls/{it.number}",
         "head": {"ref": it.head_ref, "sha": it.head_sha}, "base": {"ref": it.base_ref, "sha": it.base_sha}}
        for it in prs
    ]
    body: dict[str, Any] = {"action": action, "check_run": run}
    body.update(extra)
    body.update(_common(emu, rs, sender))
    return body


def workflow_run(emu: Emulator, action: str, rs: RepoState, run: WorkflowRun, sender: str,
                 extra: dict[str, Any]) -> dict[str, Any]:
    """`workflow_run` event (requested, in_progress, completed) for a run."""
    body: dict[str, Any] = {
        "action": action,
        "workflow_run": routes_actions.workflow_run(emu.urls, rs.repo, run),
        "workflow": {"id": 7_000_000 + len(run.workflow), "name": "device-check",
                     "path": f"{routes_actions.WORKFLOWS}/{run.workflow}"},
    }
    body.update(extra)
    body.update(_common(emu, rs, sender))
    return body


def workflow_job(emu: Emulator, action: str, rs: RepoState, run: WorkflowRun, sender: str,
                 extra: dict[str, Any]) -> dict[str, Any]:
    """`workflow_job` event (queued, in_progress, completed) for the run's one job."""
    body: dict[str, Any] = {"action": action,
                            "workflow_job": routes_actions.workflow_job(emu.urls, rs.repo, run)}
    body.update(extra)
    body.update(_common(emu, rs, sender))
    return body


def ping(emu: Emulator, sender: str) -> dict[str, Any]:
    """`ping` event of an App webhook (sent when the App's webhook is set up)."""
    hook_id = 100_000 + emu.installation_id
    return {
        "zen": ZEN,
        "hook_id": hook_id,
        "hook": {
            "type": "App",
            "id": hook_id,
            "name": "web",
            "active": True,
            "events": ["pull_request", "issue_comment", "check_run"],
            "config": {"content_type": "json", "insecure_ssl": "0", "url": "http://127.0.0.1/webhook"},
            "updated_at": "2026-01-01T00:00:00Z",
            "created_at": "2026-01-01T00:00:00Z",
            "app_id": int(emu.app_id),
            "deliveries_url": f"{emu.url}/app/hook/deliveries",
        },
        "sender": rest.user(emu.urls, sender),
    }
