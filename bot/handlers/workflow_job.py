"""`workflow_job`: a runner took a device-check job, so its check run goes in progress.

The job's run is matched to its request exactly as a finished run is (`workflow_run.match`).
"""

from __future__ import annotations

from typing import Any

from flagbot.bot import interest
from flagbot.bot.context import Context, field_of
from flagbot.bot.devices import runs
from flagbot.bot.handlers.base import Handler
from flagbot.bot.handlers.workflow_run import WORKFLOW_NAME, mark_in_progress, match

EVENT = "workflow_job"
ACTIONS = ("in_progress",)


def wants(payload: dict[str, Any]) -> bool:
    """A device-check job a runner started."""
    job = payload.get("workflow_job")
    return interest.wanted(EVENT, payload) and isinstance(job, dict) \
        and job.get("workflow_name") == WORKFLOW_NAME


def handle(ctx: Context) -> dict[str, Any]:
    """A runner took the job: its run's check run goes in progress, linked to the job's log."""
    job = field_of(ctx.payload, "workflow_job")
    run = ctx.client.workflow_run(int(field_of(job, "run_id")))
    if run is None:
        return {"skipped": "run not found"}
    outcome, found = match(ctx, run)
    if outcome != "ok":
        return {"skipped": found}
    device, ref, tracked, request = found
    labels = job.get("labels")
    if isinstance(labels, list) and labels and not set(device.runner) <= {str(x) for x in labels}:
        # the tag workflow's first job reads the settings on a hosted runner: not the device
        return {"skipped": "a job not on the device's runners", "request": request.id}
    state = mark_in_progress(ctx, ref, tracked, int(run["id"]), job.get("html_url"), device.name)
    summary = runs.refresh_summary(ctx, request.pr, request.sha) if state != "unchanged" else "unchanged"
    return {"request": request.id, "check_run": state, "summary": summary,
            "runner": job.get("runner_name")}


HANDLER = Handler(EVENT, frozenset(ACTIONS), wants, handle,
                  "kernel checks: a runner took a device-check job -> in progress")
