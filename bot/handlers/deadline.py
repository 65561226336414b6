"""`flagbot_deadline`: a kernel-check request looked at again when its time is up.

The worker records these itself after a dispatch (a follow-up delivery, scheduled for the
device's `timeout_minutes`). A run still without a report then has its workflow run cancelled and
its check run completed `timed_out`, so nothing waits forever. The time is measured from the
check run's own start, so an early or repeated look changes nothing.
"""

from __future__ import annotations

from typing import Any

from flagbot.bot.context import Context, field_of
from flagbot.bot.dashboard import record
from flagbot.bot.devices import plan, results, runs
from flagbot.bot.devices.ids import DEADLINE_EVENT, Request
from flagbot.bot.handlers.base import Handler
from flagbot.bot.monitoring import metrics

EVENT = DEADLINE_EVENT
ACTIONS = ("check",)  # the follow-up's only action (`runs.deadline`)


def wants(payload: dict[str, Any]) -> bool:
    return Request.parse(str(payload.get("request") or "")) is not None


def handle(ctx: Context) -> dict[str, Any]:
    """Time out the request's run if its time is up; else look again when it will be."""
    request = Request.parse(str(field_of(ctx.payload, "request")))
    if request is None or ctx.config is None:
        return {"skipped": "no request or invalid config"}
    device = plan.devices(ctx.config).get(request.device)
    if device is None:
        return {"skipped": f"device {request.device} is not configured"}
    ref, tracked = runs.latest(ctx.client, request.sha, device)
    if ref is None or tracked is None or tracked.request != request.id or ref.status == "completed":
        return {"request": request.id, "check_run": "finished"}
    left = device.timeout_minutes * 60.0 - runs.elapsed_since(ref)
    if left > 0:
        runs.deadline(ctx, request, left, int(ctx.payload.get("attempt") or 1) + 1)
        return {"request": request.id, "check_run": "waiting", "seconds_left": round(left)}
    rule = plan.rules(ctx.config)
    run_id = tracked.run_id or runs.find_run(ctx.client, rule.workflow, request, tracked.by_tag)
    cancelled = runs.cancel(ctx.client, run_id, tracked.by_tag) if run_id else False
    why = (f"No report came back within {device.timeout_minutes} minutes. "
           + ("The workflow run was cancelled." if cancelled else
              "No workflow run was found: is a runner with the labels "
              f"`{', '.join(device.runner) or 'local'}` online, and is "
              f"`.github/workflows/{rule.workflow}` on the "
              + ("tagged head" if tracked.by_tag else "default branch") + "?"
              if not run_id else "The workflow run had already ended without reporting."))
    runs.finish(ctx.client, ref.id, results.without_report(
        device, "timed_out", f"no report within {device.timeout_minutes} min", why,
        runs.run_url(ctx, run_id)), tracked.but(run_id=run_id, state="done"))
    metrics.device_timeout(device.name)
    record.finished(ctx, tracked.request, "timed_out", run_id=run_id)
    return {"request": request.id, "check_run": "timed_out", "workflow_cancelled": cancelled,
            "summary": runs.refresh_summary(ctx, request.pr, request.sha)}


HANDLER = Handler(EVENT, frozenset(ACTIONS), wants, handle,
                  "kernel checks: a run with no report in time -> timed out", internal=True)
