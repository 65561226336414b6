"""Actions API: workflow dispatch (inputs checked against the workflow file), runs, cancel,
artifacts and their zip download (a 302 to a blob URL, as GitHub answers)."""

from __future__ import annotations

import re
from typing import Any

import yaml

from testing.github_emulator import gitstore, rest
from testing.github_emulator.server import ApiError, Reply, Request, invalid, not_found
from testing.github_emulator.state import Artifact, EmuRepo, RepoState, WorkflowRun, iso

WORKFLOWS = ".github/workflows"
EXPRESSION = re.compile(r"\$\{\{\s*inputs\.([A-Za-z0-9_-]+)\s*\}\}")


def workflow_file(rs: RepoState, workflow: str, ref: str) -> dict[str, Any]:
    """The parsed workflow `workflow` (a file name) at `ref` (404 when the file is not there)."""
    if not re.fullmatch(r"[A-Za-z0-9_.-]+\.ya?ml", workflow):
        raise not_found()
    sha = gitstore.rev_parse(rs.repo.bare_path, ref)
    if sha is None:
        raise invalid(f"No ref found for: {ref}", "Workflow", "ref")
    raw = gitstore.git(rs.repo.bare_path, "show", f"{sha}:{WORKFLOWS}/{workflow}", check=False)
    if not raw:
        raise not_found()
    doc = yaml.safe_load(raw)
    if not isinstance(doc, dict):
        raise invalid("Workflow does not parse", "Workflow", "file")
    return doc


def dispatch_inputs(doc: dict[str, Any]) -> dict[str, Any] | None:
    """`on.workflow_dispatch.inputs` ({} when it takes none), None when it has no such trigger."""
    on = doc.get("on", doc.get(True))  # YAML 1.1 reads a bare `on` key as the boolean True
    if isinstance(on, dict) and "workflow_dispatch" in on:
        spec = on["workflow_dispatch"] or {}
        return dict(spec.get("inputs") or {})
    if on == "workflow_dispatch" or (isinstance(on, list) and "workflow_dispatch" in on):
        return {}
    return None


def create_dispatch(req: Request) -> Reply:
    """POST /repos/{o}/{r}/actions/workflows/{workflow}/dispatches."""
    rs, body = req.rs, req.body_dict()
    ref = body.get("ref")
    if not isinstance(ref, str) or not ref:
        raise invalid("ref is missing", "Workflow", "ref", "missing_field")
    doc = workflow_file(rs, req.params["workflow"], ref)
    declared = dispatch_inputs(doc)
    if declared is None:
        raise invalid("Workflow does not have 'workflow_dispatch' trigger", "Workflow", "on")
    given = body.get("inputs") or {}
    if not isinstance(given, dict) or not all(isinstance(v, str) for v in given.values()):
        raise invalid("inputs must be an object of strings", "Workflow", "inputs")
    unexpected = sorted(set(given) - set(declared))
    if unexpected:
        raise invalid(f"Unexpected inputs provided: {unexpected}", "Workflow", "inputs")
    inputs: dict[str, str] = {}
    for name, spec in declared.items():
        spec = spec or {}
        if name in given:
            inputs[name] = given[name]
        elif "default" in spec:
            inputs[name] = str(spec["default"])
        elif spec.get("required"):
            raise invalid(f"Required input '{name}' not provided", "Workflow", "inputs")
    template = str(doc.get("run-name") or doc.get("name") or req.params["workflow"])
    title = EXPRESSION.sub(lambda m: inputs.get(m.group(1), ""), template)
    sha = gitstore.rev_parse(rs.repo.bare_path, ref) or ""
    branch = ref.removeprefix("refs/heads/")
    run = WorkflowRun(req.emu.state.next_id(), req.params["workflow"], title, "workflow_dispatch",
                      branch, sha, inputs, iso(), job_id=req.emu.state.next_id())
    rs.workflow_runs[run.id] = run
    if body.get("return_run_details"):
        out = workflow_run(req.emu.urls, rs.repo, run)
        return Reply(200, {"workflow_run_id": run.id, "run_url": out["url"],
                           "html_url": out["html_url"]})
    return Reply(204)


def workflow_run(u: rest.Urls, r: EmuRepo, run: WorkflowRun) -> dict[str, Any]:
    """A workflow run object."""
    api = f"{u.api}/repos/{r.full_name}/actions/runs/{run.id}"
    return {
        "id": run.id,
        "name": "device-check",
        "node_id": rest.node_id("WorkflowRun", run.id),
        "display_title": run.display_title,
        "path": f"{WORKFLOWS}/{run.workflow}",
        "event": run.event,
        "status": run.status,
        "conclusion": run.conclusion,
        "head_branch": run.head_branch,
        "head_sha": run.head_sha,
        "run_number": run.id % 10_000,
        "run_attempt": 1,
        "url": api,
        "html_url": f"{u.html}/{r.full_name}/actions/runs/{run.id}",
        "jobs_url": api + "/jobs",
        "logs_url": api + "/logs",
        "artifacts_url": api + "/artifacts",
        "cancel_url": api + "/cancel",
        "created_at": run.created_at,
        "updated_at": iso(),
        "pull_requests": [],
        "repository": {"id": r.id, "full_name": r.full_name, "name": r.name},
    }


def workflow_job(u: rest.Urls, r: EmuRepo, run: WorkflowRun) -> dict[str, Any]:
    """The run's one job, as a `workflow_job` payload carries it."""
    return {
        "id": run.job_id,
        "run_id": run.id,
        "run_url": f"{u.api}/repos/{r.full_name}/actions/runs/{run.id}",
        "html_url": f"{u.html}/{r.full_name}/actions/runs/{run.id}/job/{run.job_id}",
        "head_sha": run.head_sha,
        "head_branch": run.head_branch,
        "name": "check",
        "workflow_name": "device-check",
        "status": run.status,
        "conclusion": run.conclusion,
        "labels": list(run.runner_labels),
        "runner_name": run.runner_name or ("runner-1" if run.status != "queued" else None),
        "started_at": run.created_at,
    }


def artifact(u: rest.Urls, r: EmuRepo, a: Artifact) -> dict[str, Any]:
    """An artifact object."""
    api = f"{u.api}/repos/{r.full_name}/actions/artifacts/{a.id}"
    return {"id": a.id, "node_id": rest.node_id("Artifact", a.id), "name": a.name,
            "size_in_bytes": len(a.data), "url": api, "archive_download_url": api + "/zip",
            "expired": a.expired, "created_at": iso(), "expires_at": iso(),
            "workflow_run": {"id": a.run_id}}


def _run(req: Request) -> WorkflowRun:
    run = req.rs.workflow_runs.get(int(req.params["id"]))
    if run is None:
        raise not_found()
    return run


def list_runs(req: Request) -> Reply:
    """GET /repos/{o}/{r}/actions/runs and .../actions/workflows/{workflow}/runs (newest first)."""
    rs = req.rs
    runs = sorted(rs.workflow_runs.values(), key=lambda x: -x.id)
    if "workflow" in req.params:
        runs = [x for x in runs if x.workflow == req.params["workflow"]]
    for key in ("event", "status", "head_sha"):
        if key in req.query:
            runs = [x for x in runs if getattr(x, key) == req.query[key]]
    page = req.paginate(runs, lambda x: workflow_run(req.emu.urls, rs.repo, x))
    page.body = {"total_count": len(runs), "workflow_runs": page.body}
    return page


def get_run(req: Request) -> Reply:
    """GET /repos/{o}/{r}/actions/runs/{id}."""
    return Reply(200, workflow_run(req.emu.urls, req.rs.repo, _run(req)))


def list_jobs(req: Request) -> Reply:
    """GET /repos/{o}/{r}/actions/runs/{id}/jobs: the run's one job."""
    run = _run(req)
    page = req.paginate([run], lambda x: workflow_job(req.emu.urls, req.rs.repo, x))
    page.body = {"total_count": 1, "jobs": page.body}
    return page


def cancel_run(req: Request) -> Reply:
    """POST /repos/{o}/{r}/actions/runs/{id}/cancel: 202, or 409 once the run completed."""
    run = _run(req)
    if run.status == "completed":
        raise ApiError(409, "Cannot cancel a workflow run that is completed.")
    run.status, run.conclusion = "completed", "cancelled"
    return Reply(202, {})


def list_artifacts(req: Request) -> Reply:
    """GET /repos/{o}/{r}/actions/runs/{id}/artifacts."""
    rs, run = req.rs, _run(req)
    found = [a for a in rs.artifacts.values() if a.run_id == run.id]
    page = req.paginate(found, lambda a: artifact(req.emu.urls, rs.repo, a))
    page.body = {"total_count": len(found), "artifacts": page.body}
    return page


def download_artifact(req: Request) -> Reply:
    """GET /repos/{o}/{r}/actions/artifacts/{id}/zip: 302 to the blob (410 once expired)."""
    a = req.rs.artifacts.get(int(req.params["id"]))
    if a is None:
        raise not_found()
    if a.expired:
        raise ApiError(410, "Artifact has expired")
    location = f"{req.emu.url}/_emu/blobs/{req.rs.repo.full_name}/artifacts/{a.id}"
    return Reply(302, None, {"Location": location})


def artifact_blob(req: Request) -> Reply:
    """GET /_emu/blobs/{o}/{r}/artifacts/{id}: the zip bytes (storage needs no GitHub token)."""
    a = req.rs.artifacts.get(int(req.params["id"]))
    if a is None:
        raise not_found()
    return Reply(200, a.data)
