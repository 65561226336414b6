"""JSON bodies of the App side: the App, its installation, check runs."""

from __future__ import annotations

from typing import Any

from testing.github_emulator.rest import Urls, node_id, user, user_id
from testing.github_emulator.state import CheckRun, EmuRepo


def app(u: Urls) -> dict[str, Any]:
    """The GitHub App object (`GET /app`)."""
    return {
        "id": u.app_id,
        "slug": u.app_slug,
        "node_id": node_id("App", u.app_id),
        "client_id": f"Iv1.{u.app_id:016x}",
        "owner": user(u, "flagos"),
        "name": u.app_slug,
        "description": "flagbot (emulated)",
        "external_url": f"{u.html}/apps/{u.app_slug}",
        "html_url": f"{u.html}/apps/{u.app_slug}",
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
        "permissions": APP_PERMISSIONS,
        "events": ["pull_request", "issue_comment", "check_run", "workflow_run", "workflow_job"],
        "installations_count": 1,
    }


APP_PERMISSIONS = {
    "actions": "write",
    "checks": "write",
    "contents": "write",
    "issues": "write",
    "metadata": "read",
    "pull_requests": "write",
}


def installation(u: Urls, inst_id: int, account: str) -> dict[str, Any]:
    """An installation object."""
    return {
        "id": inst_id,
        "account": user(u, account),
        "access_tokens_url": f"{u.api}/app/installations/{inst_id}/access_tokens",
        "repositories_url": f"{u.api}/installation/repositories",
        "html_url": f"{u.html}/settings/installations/{inst_id}",
        "app_id": u.app_id,
        "app_slug": u.app_slug,
        "target_id": user_id(account),
        "target_type": "User",
        "permissions": APP_PERMISSIONS,
        "events": ["pull_request", "issue_comment", "check_run", "workflow_run", "workflow_job"],
        "repository_selection": "all",
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
        "single_file_name": None,
        "suspended_at": None,
        "suspended_by": None,
    }


def check_run(u: Urls, r: EmuRepo, cr: CheckRun) -> dict[str, Any]:
    """A check run object (annotations are listed by `GET .../check-runs/{id}/annotations`)."""
    api = f"{u.api}/repos/{r.full_name}/check-runs/{cr.id}"
    output = {
        "title": cr.output.get("title"),
        "summary": cr.output.get("summary"),
        "text": cr.output.get("text"),
        "annotations_count": len(cr.annotations),
        "annotations_url": api + "/annotations",
    }
    return {
        "id": cr.id,
        "node_id": node_id("CheckRun", cr.id),
        "head_sha": cr.head_sha,
        "external_id": cr.external_id,
        "url": api,
        "html_url": f"{u.html}/{r.full_name}/runs/{cr.id}",
        "details_url": cr.details_url,
        "status": cr.status,
        "conclusion": cr.conclusion,
        "started_at": cr.started_at,
        "completed_at": cr.completed_at,
        "output": output,
        "name": cr.name,
        "check_suite": {"id": cr.id + 500_000},
        "app": app(u),
        "pull_requests": [],
    }
