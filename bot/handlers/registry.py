"""The handlers the worker runs (adding one is a module declaring `HANDLER` plus a line here)."""

from __future__ import annotations

from flagbot.bot.handlers import deadline, issue_comment, pull_request, workflow_job, workflow_run
from flagbot.bot.handlers.base import Handler

ALL: tuple[Handler, ...] = (pull_request.HANDLER, issue_comment.HANDLER, workflow_run.HANDLER,
                            workflow_job.HANDLER, deadline.HANDLER)
# GitHub events, by name; and the worker's own follow-ups, never accepted from a webhook
HANDLERS: dict[str, Handler] = {h.event: h for h in ALL if not h.internal}
INTERNAL: dict[str, Handler] = {h.event: h for h in ALL if h.internal}
