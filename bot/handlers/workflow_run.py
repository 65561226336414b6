"""`workflow_run`: device-check runs reporting back (`workflow_job.py`: their jobs starting).

A run is matched to its request by the id at the end of its title (the workflow's `run-name`),
then to the check run that names the same request (and, once known, the same run id). A run the
bot did not dispatch (another workflow, a different event, another run id) is ignored, so a
pull request cannot forge a verdict with a look-alike workflow. A completed run's report
artifact gives the verdict; a job taken by a runner turns the check run `in_progress`.
"""

from __future__ import annotations

from typing import Any

from flagbot.bot import interest
from flagbot.bot.context import Context, field_of
from flagbot.bot.dashboard import record
from flagbot.bot.devices import plan, runs
from flagbot.bot.devices.ids import Request, Tracked
from flagbot.bot.github import CheckRunRef
from flagbot.bot.handlers.base import Handler

EVENT = "workflow_run"
ACTIONS = ("in_progress", "completed")
WORKFLOW_NAME = "device-check"  # the shipped workflow's `name:`; its jobs' `workflow_name`


def wants(payload: dict[str, Any]) -> bool:
    """A device-check run (its title names a request) that started or finished."""
    run = payload.get("workflow_run")
    return interest.wanted(EVENT, payload) and isinstance(run, dict) \
        and Request.from_title(str(run.get("display_title") or "")) is not None


def match(ctx: Context, run: dict[str, Any]) -> tuple[str, Any]:
    """("ok", (device, check run, tracked)) for a run of ours, else ("skipped", why)."""
    request = Request.from_title(str(run.get("display_title") or ""))
    if request is None or ctx.config is None:
        return "skipped", "not a kernel-check run" if request is None else "invalid config"
    device = plan.devices(ctx.config).get(request.device)
    if device is None:
        return "skipped", f"device {request.device} is not configured"
    ref, tracked = runs.latest(ctx.client, request.sha, device)
    if ref is None or tracked is None or tracked.request != request.id:
        return "skipped", "no check run waits for this request (superseded or unknown)"
    if tracked.run_id is not None and tracked.run_id != int(run.get("id") or 0):
        return "skipped", f"the request belongs to run {tracked.run_id}"
    rule = plan.rules(ctx.config)
    if tracked.run_id is None and (run.get("event") != "workflow_dispatch" or not str(
            run.get("path") or "").endswith("/" + rule.workflow)):
        return "skipped", "not a dispatch of the configured workflow"
    return "ok", (device, ref, tracked, request)


def mark_in_progress(ctx: Context, ref: CheckRunRef, tracked: Tracked, run_id: int,
                     url: str | None) -> str:
    """Queued -> in_progress, recording the run id (done once)."""
    if ref.status != "queued":
        return "unchanged"
    fields: dict[str, Any] = {"status": "in_progress",
                              "external_id": Tracked(tracked.request, run_id, tracked.ops,
                                                     tracked.state).encode()}
    if url:
        fields["details_url"] = url
    ctx.client.update_check_run(ref.id, fields)
    record.running(ctx, tracked.request, run_id, url)
    return "in_progress"


def handle(ctx: Context) -> dict[str, Any]:
    """Start or finish the check run of a device-check workflow run."""
    run = field_of(ctx.payload, "workflow_run")
    outcome, found = match(ctx, run)
    if outcome != "ok":
        return {"skipped": found}
    device, ref, tracked, request = found
    if ref.status == "completed":
        return {"request": request.id, "check_run": "completed already"}
    run_id = int(run["id"])
    if ctx.action != "completed" or run.get("status") != "completed":
        return {"request": request.id,
                "check_run": mark_in_progress(ctx, ref, tracked, run_id, run.get("html_url"))}
    conclusion = runs.conclude(ctx, ref, tracked, device, run)
    return {"request": request.id, "conclusion": conclusion,
            "summary": runs.refresh_summary(ctx, request.pr, request.sha)}


HANDLER = Handler(EVENT, frozenset(ACTIONS), wants, handle,
                  "kernel checks: a device-check run finished -> its check run's verdict")
