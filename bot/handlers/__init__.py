"""Handler registry: which events the bot reacts to, and the one entry point the worker calls.

`HANDLERS` is the only table of events; `FEATURES` lists the per-feature modules (name + help)
for docs and `/help`. Adding an event is one module plus one line here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from github import GithubException

from flagbot.bot import github, locks, repo_config
from flagbot.bot.context import Context, PayloadError, field_of
from flagbot.bot.settings import Settings
from flagbot.bot.workspace import GitWorkspace


@dataclass(frozen=True)
class Handler:
    """An event's handler: a cheap `wants(payload)` filter and `run(ctx)`."""

    wants: Callable[[dict[str, Any]], bool]
    run: Callable[[Context], dict[str, Any]]
    help: str


def _registry() -> dict[str, Handler]:
    from flagbot.bot.handlers import pull_request

    return {
        "pull_request": Handler(pull_request.wants, pull_request.handle,
                                "labels, `flagbot / patches`, `flagbot / backends`, summary comment"),
    }


HANDLERS: dict[str, Handler] = _registry()


def features() -> list[tuple[str, str]]:
    """(name, help) of every feature module, in the order the PR flow runs them."""
    from flagbot.bot.handlers import backends, labels, patches, summary

    return [(m.NAME, m.HELP) for m in (labels, patches, backends, summary)]


def wants(event: str, payload: dict[str, Any]) -> bool:
    """True when some handler reacts to (event, payload["action"]); no I/O."""
    handler = HANDLERS.get(event)
    return handler is not None and isinstance(payload, dict) and handler.wants(payload)


def run_context(ctx: Context) -> dict[str, Any]:
    """Run the event's handler on a built context (shared by the worker and `flagbot replay`)."""
    result = HANDLERS[ctx.event].run(ctx)
    return {
        "delivery": ctx.delivery_id, "event": ctx.event, "action": ctx.action,
        "repository": ctx.full_name, "dry_run": ctx.dry_run, **result,
        "actions": [{"kind": a.kind, **a.detail} for a in ctx.client.actions],
    }


def run_delivery(settings: Settings, delivery_id: str, event: str, payload: dict[str, Any]) -> dict[str, Any]:
    """Run every handler for the delivery to completion; raises on failure (the worker retries)."""
    if not wants(event, payload):
        return {"delivery": delivery_id, "event": event, "skipped": "no handler wants it"}
    installation = int(field_of(payload, "installation", "id"))
    try:
        result = _run(settings, delivery_id, event, payload, installation)
    except GithubException as exc:
        if exc.status != 401:
            raise
        # The cached token was revoked before its expiry (uninstall/reinstall, key rotation):
        # mint a new one and run again; every step is idempotent, so a second pass is safe.
        github.forget_token(settings, installation)
        result = _run(settings, delivery_id, event, payload, installation)
    return result


def _run(settings: Settings, delivery_id: str, event: str, payload: dict[str, Any],
         installation: int) -> dict[str, Any]:
    full_name = str(field_of(payload, "repository", "full_name"))
    default_branch = str(field_of(payload, "repository", "default_branch"))
    clone_url = str(field_of(payload, "repository", "clone_url"))
    client = github.repo_client(settings, installation, full_name)
    workspace = GitWorkspace(settings.state_dir, full_name, clone_url,
                             token=lambda: github.installation_token(settings, installation))
    # The whole flow runs under the repository lock: two deliveries for one PR at once would
    # otherwise both find no summary comment and both create one.
    with locks.repo_lock(settings, full_name):
        config, error = repo_config.load(client, default_branch)
        ctx = Context(settings, delivery_id, event, payload, full_name, default_branch, client,
                      workspace, config, error)
        return run_context(ctx)


__all__ = ["HANDLERS", "Handler", "PayloadError", "features", "run_context", "run_delivery", "wants"]
