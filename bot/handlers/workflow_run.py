"""`workflow_run`: device-check runs reporting back (`workflow_job.py`: their jobs starting).

A run is matched to its request by the id at the end of its title (the workflow's `run-name`),
then to the check run that names the same request (and, once known, the same run id). A run the
bot did not dispatch (another workflow, a different event, another run id) is ignored, so a
pull request cannot forge a verdict with a look-alike workflow. A completed run's report
artifact gives the verdict; a job taken by a runner turns the check run `in_progress`.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from flagbot.bot import interest
from flagbot.bot.context import Context, field_of
from flagbot.bot.dashboard import record
from flagbot.bot.devices import plan, runs
from flagbot.bot.devices.ids import Request, Tracked, parse_tag
from flagbot.bot.github import CheckRunRef
from flagbot.bot.handlers.base import Handler
from flagbot.bot.monitoring import metrics

EVENT = "workflow_run"
ACTIONS = ("in_progress", "completed")
WORKFLOW_NAME = "device-check"  # the shipped workflows' `name:`; their jobs' `workflow_name`
CLOCK_SLACK_S = 5.0  # GitHub's and the bot's clocks: a tag run this much "older" still counts


def wants(payload: dict[str, Any]) -> bool:
    """A device-check run (its title names a request, or a ciflow tag pushed it) that started or
    finished."""
    run = payload.get("workflow_run")
    return interest.wanted(EVENT, payload) and isinstance(run, dict) and (
        Request.from_title(str(run.get("display_title") or "")) is not None or tag_of(run) is not None)


def tag_of(run: dict[str, Any]) -> tuple[str, int] | None:
    """(device, PR) of a run a ciflow tag push started, else None."""
    return parse_tag(str(run.get("head_branch") or "")) if run.get("event") == "push" else None


def epoch(text: object) -> float | None:
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def match(ctx: Context, run: dict[str, Any]) -> tuple[str, Any]:
    """("ok", (device, check run, tracked, request)) for a run of ours, else ("skipped", why).

    A dispatched run names its request in its title; a tag-started run is matched by its tag,
    head sha and workflow file to the check run of that head and device that waits for a tag
    run, and must be newer than that check run's (re)start."""
    request = Request.from_title(str(run.get("display_title") or ""))
    tag = tag_of(run) if request is None else None
    if (request is None and tag is None) or ctx.config is None:
        return "skipped", "invalid config" if ctx.config is None else "not a kernel-check run"
    name = request.device if request is not None else tag[0] if tag else ""
    device = plan.devices(ctx.config).get(name)
    if device is None:
        return "skipped", f"device {name} is not configured"
    sha = request.sha if request is not None else str(run.get("head_sha") or "")
    ref, tracked = runs.latest(ctx.client, sha, device)
    if ref is None or tracked is None:
        return "skipped", "no check run waits for this request (superseded or unknown)"
    run_id = int(run.get("id") or 0)
    if tag is not None:
        request = Request.parse(tracked.request)
        if not tracked.by_tag or request is None or request.pr != tag[1]:
            return "skipped", "no check run waits for a run of this tag"
        created = epoch(run.get("created_at"))
        if tracked.run_id is None and ref.started_at and created is not None \
                and created < ref.started_at - CLOCK_SLACK_S:
            return "skipped", "the run is older than this head's request"
    elif request is None or tracked.request != request.id:
        return "skipped", "no check run waits for this request (superseded or unknown)"
    if tracked.prev is not None and tracked.prev[0] == run_id:
        return "skipped", f"run {run_id} was an earlier attempt"
    if tracked.run_id is not None and tracked.run_id != run_id:
        return "skipped", f"the request belongs to run {tracked.run_id}"
    rule = plan.rules(ctx.config)
    event = "push" if tag is not None else "workflow_dispatch"
    if tracked.run_id is None and (run.get("event") != event or not str(
            run.get("path") or "").endswith("/" + rule.workflow)):
        return "skipped", "not a run of the configured workflow"
    assert request is not None
    return "ok", (device, ref, tracked, request)


def mark_in_progress(ctx: Context, ref: CheckRunRef, tracked: Tracked, run_id: int,
                     url: str | None, device: str = "") -> str:
    """Queued -> in_progress, recording the run id and when a runner took it (done once)."""
    if ref.status != "queued":
        return "unchanged"
    now = time.time()
    if ref.started_at and device:
        metrics.device_queued(device, now - ref.started_at)
    fields: dict[str, Any] = {"status": "in_progress",
                              "external_id": tracked.but(run_id=run_id, progress_at=int(now)).encode()}
    if url:
        fields["details_url"] = url
    ctx.client.update_check_run(ref.id, fields)
    record.running(ctx, tracked.request, run_id, url)
    return "in_progress"


def record_run(ctx: Context, ref: CheckRunRef, tracked: Tracked, run: dict[str, Any]) -> str:
    """Pin a tag-started run to its check run (once), with the link to it."""
    if tracked.run_id is not None:
        return "unchanged"
    url = run.get("html_url")
    ctx.client.update_check_run(ref.id, {"external_id": tracked.but(run_id=int(run["id"])).encode(),
                                         **({"details_url": url} if url else {})})
    return "run recorded"


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
        if tracked.by_tag:
            # The tag workflow starts with a job on a hosted runner: the run being under way says
            # nothing about the device; its `workflow_job` on the device's runner does.
            return {"request": request.id, "check_run": record_run(ctx, ref, tracked, run)}
        return {"request": request.id,
                "check_run": mark_in_progress(ctx, ref, tracked, run_id, run.get("html_url"),
                                              device.name)}
    conclusion = runs.conclude(ctx, ref, tracked, device, run)
    return {"request": request.id, "conclusion": conclusion,
            "summary": runs.refresh_summary(ctx, request.pr, request.sha)}


HANDLER = Handler(EVENT, frozenset(ACTIONS), wants, handle,
                  "kernel checks: a device-check run finished -> its check run's verdict")
