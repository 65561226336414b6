"""Checks API: check runs with GitHub's validation (50 annotations per request, appended)."""

from __future__ import annotations

from typing import Any

from testing.github_emulator import gitstore, rest_app
from testing.github_emulator.server import Reply, Request, invalid, not_found
from testing.github_emulator.state import CheckRun, RepoState, iso

MAX_ANNOTATIONS = 50  # per request; GitHub appends the annotations of each update
MAX_TEXT = 65535
STATUSES = ("queued", "in_progress", "completed")
CONCLUSIONS = ("action_required", "cancelled", "failure", "neutral", "success", "skipped", "timed_out")
LEVELS = ("notice", "warning", "failure")


def _check_annotation(i: int, a: Any) -> dict[str, Any]:
    if not isinstance(a, dict):
        raise invalid(f"output.annotations[{i}] is not an object", "CheckRun", "annotations")
    for key in ("path", "start_line", "end_line", "annotation_level", "message"):
        if a.get(key) in (None, ""):
            raise invalid(f"output.annotations[{i}].{key} is missing", "CheckRun", "annotations", "missing_field")
    if a["annotation_level"] not in LEVELS:
        raise invalid(f"output.annotations[{i}].annotation_level {a['annotation_level']!r} is not one of {LEVELS}",
                      "CheckRun", "annotations")
    if not isinstance(a["start_line"], int) or not isinstance(a["end_line"], int) or a["end_line"] < a["start_line"]:
        raise invalid(f"output.annotations[{i}]: start_line/end_line must be integers, end >= start",
                      "CheckRun", "annotations")
    return dict(a)


def _apply_output(cr: CheckRun, output: Any) -> None:
    if not isinstance(output, dict):
        raise invalid("output must be an object", "CheckRun", "output")
    if not output.get("title") or not output.get("summary"):
        raise invalid("output needs both title and summary", "CheckRun", "output", "missing_field")
    for key in ("summary", "text"):
        if len(str(output.get(key) or "")) > MAX_TEXT:
            raise invalid(f"output.{key} is longer than {MAX_TEXT} characters", "CheckRun", "output")
    annotations = output.get("annotations") or []
    if not isinstance(annotations, list):
        raise invalid("output.annotations must be a list", "CheckRun", "annotations")
    if len(annotations) > MAX_ANNOTATIONS:
        raise invalid(f"Only {MAX_ANNOTATIONS} annotations are allowed per request, got {len(annotations)}",
                      "CheckRun", "annotations", "too_many")
    checked = [_check_annotation(i, a) for i, a in enumerate(annotations)]
    cr.output = {k: output.get(k) for k in ("title", "summary", "text")}
    cr.annotations.extend(checked)


def _apply_state(cr: CheckRun, body: dict[str, Any]) -> None:
    status, conclusion = body.get("status"), body.get("conclusion")
    if status is not None and status not in STATUSES:
        raise invalid(f"status {status!r} is not one of {STATUSES}", "CheckRun", "status")
    if conclusion is not None and conclusion not in CONCLUSIONS:
        raise invalid(f"conclusion {conclusion!r} is not one of {CONCLUSIONS}", "CheckRun", "conclusion")
    if status == "completed" and conclusion is None and cr.conclusion is None:
        raise invalid("conclusion is required when status is completed", "CheckRun", "conclusion", "missing_field")
    if conclusion is not None:  # GitHub: giving a conclusion completes the run
        cr.status, cr.conclusion = "completed", str(conclusion)
        cr.completed_at = str(body.get("completed_at") or iso())
    elif status is not None:
        cr.status = str(status)
    for key in ("external_id", "details_url", "name", "started_at"):
        if body.get(key) is not None:
            setattr(cr, key, str(body[key]))


def _run(req: Request) -> CheckRun:
    cr = req.rs.check_runs.get(int(req.params["id"]))
    if cr is None:
        raise not_found()
    return cr


def _json(req: Request, cr: CheckRun) -> dict[str, Any]:
    return rest_app.check_run(req.emu.urls, req.rs.repo, cr)


def create_check_run(req: Request) -> Reply:
    """POST /repos/{o}/{r}/check-runs."""
    rs, body = req.rs, req.body_dict()
    name, head_sha = body.get("name"), body.get("head_sha")
    if not name:
        raise invalid("name is missing", "CheckRun", "name", "missing_field")
    if not head_sha or gitstore.rev_parse(rs.repo.bare_path, str(head_sha)) is None:
        raise invalid(f"No commit found for SHA: {head_sha}", "CheckRun", "head_sha")
    now = iso()
    cr = CheckRun(req.emu.state.next_id(), str(name), str(head_sha), "queued", None,
                  str(body.get("started_at") or now), None)
    _apply_state(cr, body)
    if "output" in body:
        _apply_output(cr, body["output"])
    rs.check_runs[cr.id] = cr
    return Reply(201, _json(req, cr))


def update_check_run(req: Request) -> Reply:
    """PATCH /repos/{o}/{r}/check-runs/{id}: output replaces title/summary/text, annotations append."""
    cr, body = _run(req), req.body_dict()
    # Validate on a copy so a rejected update changes nothing, like GitHub.
    trial = CheckRun(**{**cr.__dict__, "annotations": list(cr.annotations), "output": dict(cr.output)})
    _apply_state(trial, body)
    if "output" in body:
        _apply_output(trial, body["output"])
    cr.__dict__.update(trial.__dict__)
    return Reply(200, _json(req, cr))


def get_check_run(req: Request) -> Reply:
    """GET /repos/{o}/{r}/check-runs/{id}."""
    return Reply(200, _json(req, _run(req)))


def list_annotations(req: Request) -> Reply:
    """GET /repos/{o}/{r}/check-runs/{id}/annotations."""
    return req.paginate(list(_run(req).annotations))


def runs_for_sha(rs: RepoState, sha: str, latest: bool) -> list[CheckRun]:
    """Check runs on `sha`, newest first; `latest` keeps the newest run per name (GitHub's default)."""
    runs = sorted((cr for cr in rs.check_runs.values() if cr.head_sha == sha), key=lambda c: -c.id)
    if not latest:
        return runs
    newest: dict[str, CheckRun] = {}
    for cr in runs:
        newest.setdefault(cr.name, cr)
    return list(newest.values())


def list_for_ref(req: Request) -> Reply:
    """GET /repos/{o}/{r}/commits/{ref}/check-runs: filters check_name, status, filter=latest|all."""
    rs = req.rs
    sha = gitstore.rev_parse(rs.repo.bare_path, req.params["ref"])
    if sha is None:
        raise invalid(f"No commit found for SHA: {req.params['ref']}", "Commit", "sha")
    runs = runs_for_sha(rs, sha, req.query.get("filter", "latest") == "latest")
    if "check_name" in req.query:
        runs = [cr for cr in runs if cr.name == req.query["check_name"]]
    if "status" in req.query:
        runs = [cr for cr in runs if cr.status == req.query["status"]]
    page = req.paginate([_json(req, cr) for cr in runs])
    page.body = {"total_count": len(runs), "check_runs": page.body}
    return page
