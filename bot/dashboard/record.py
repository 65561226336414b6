"""What the device-run code tells the dashboard: a run started, moved, finished (with its report).

Each hook is one call from the place that does the work (`devices/runs.py`,
`handlers/workflow_run.py`, `handlers/deadline.py`); a local run's report is handed over where
it is read (`ingested`), a runner's with the run's end (`finished`). Recording is a side note: a store that
fails is logged and never fails the check run, and a dry run (`flagbot replay --dry-run`)
records nothing.
"""

from __future__ import annotations

import logging
import time

from flagbot.bot.context import Context
from flagbot.bot.dashboard.factory import open_store
from flagbot.bot.dashboard.store import DeviceRun, KernelResult
from flagbot.bot.devices.ids import Request
from flagbot.bot.devices.report import Report, ReportError, parse_report

log = logging.getLogger(__name__)


def results_of(report: Report, repo: str, pr: int, sha: str, device: str,
               at: float) -> list[KernelResult]:
    """One result per op of `report`: the ratio goes to the column its kind was gated on."""
    found = []
    for op in report.ops:
        found.append(KernelResult(
            repo, pr, sha, device, op.name, op.kind, op.verdict,
            op.speedup if op.kind == "override" else None,
            op.speedup if op.kind == "new" else None,
            op.passed / op.cases if op.cases else None, at))
    return found


def started(ctx: Context, request_id: str, *, local: bool = False) -> None:
    """The bot created the check run of `request_id` (and dispatched it, or runs it here)."""
    request = Request.parse(request_id)
    if ctx.dry_run or request is None:
        return
    now = time.time()
    run = DeviceRun(request_id, ctx.full_name, request.pr, request.sha, request.device,
                    "in_progress" if local else "queued", None, now, now if local else None)
    try:
        open_store(ctx.settings).run_started(run)
    except Exception:
        log.warning("dashboard: could not record run %s", request_id, exc_info=True)


def running(ctx: Context, request_id: str, run_id: int, url: str | None) -> None:
    """A runner took the workflow run of `request_id`."""
    if ctx.dry_run:
        return
    try:
        open_store(ctx.settings).run_moved(request_id, status="in_progress", at=time.time(),
                                           run_id=run_id, url=url)
    except Exception:
        log.warning("dashboard: could not record run %s", request_id, exc_info=True)


def restarted(ctx: Context, old_id: str, new_id: str, conclusion: str, *, run_id: int,
              url: str | None) -> None:
    """The run of `old_id` ended `conclusion` without a report (its runner failed) and the same
    head was started again as `new_id`: the old one completes, the new one counts a retry."""
    finished(ctx, old_id, conclusion, run_id=run_id, url=url)
    started(ctx, new_id)


def finished(ctx: Context, request_id: str, conclusion: str, *, report: bytes | None = None,
             run_id: int | None = None, url: str | None = None) -> None:
    """The check run of `request_id` completed with `conclusion`; `report` is what came back."""
    request = Request.parse(request_id)
    if ctx.dry_run or request is None:
        return
    try:
        open_store(ctx.settings).run_moved(request_id, status="completed", at=time.time(),
                                           conclusion=conclusion, run_id=run_id, url=url)
    except Exception:
        log.warning("dashboard: could not record run %s", request_id, exc_info=True)
    ingested(ctx, request.pr, request.sha, request.device, report)


def ingested(ctx: Context, pr: int, sha: str, device: str, report: bytes | None) -> None:
    """A report came back for (PR, head sha, device): keep its per-op results."""
    if ctx.dry_run or not report:
        return
    try:
        parsed = parse_report(report)
    except ReportError:
        return  # the check run says why; there is nothing to chart
    try:
        open_store(ctx.settings).add_results(results_of(parsed, ctx.full_name, pr, sha, device,
                                                        time.time()))
    except Exception:
        log.warning("dashboard: could not record the report of %s#%d on %s", ctx.full_name, pr,
                    device, exc_info=True)
