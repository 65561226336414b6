"""A claimed delivery to its handler: `BotHandlers`, what the worker runs, builds the
delivery's context (the App's client, the workspace, the repository's configuration) and runs the
event's handler (`handlers/registry.py` lists them)."""

from __future__ import annotations

import logging
from typing import Any

from github import GithubException

from flagbot.bot import repo_config
from flagbot.bot.context import Context, field_of
from flagbot.bot.feed.log import LabelLog
from flagbot.bot.github.identity import GitHubApp
from flagbot.bot.handlers.base import Handler
from flagbot.bot.handlers.registry import HANDLERS, INTERNAL
from flagbot.bot.locks import RepoLocks
from flagbot.bot.settings import Settings
from flagbot.bot.store.rates import Rates
from flagbot.bot.work.workspace import GitWorkspace

log = logging.getLogger(__name__)


def handler_for(event: str) -> Handler | None:
    """The handler of a GitHub event or of one of the worker's own follow-ups."""
    return HANDLERS.get(event) or INTERNAL.get(event)


def wants(event: str, payload: dict[str, Any]) -> bool:
    """True when some handler reacts to (event, payload["action"]); no I/O."""
    handler = HANDLERS.get(event)
    return handler is not None and isinstance(payload, dict) and handler.wants(payload)


def run_context(ctx: Context) -> dict[str, Any]:
    """Run the event's handler on a built context (shared by the worker and `flagbot replay`)."""
    handler = handler_for(ctx.event)
    assert handler is not None
    result = handler.run(ctx)
    return {
        "delivery": ctx.delivery_id, "event": ctx.event, "action": ctx.action,
        "repository": ctx.full_name, "dry_run": ctx.dry_run, **result,
        "actions": [{"kind": a.kind, **a.detail} for a in ctx.client.actions],
        **({"follow_ups": ctx.follow_ups} if ctx.follow_ups else {}),
    }


class BotHandlers:
    """The bot's handlers acting on GitHub as the App (`github`); the worker runs `run`."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.github = GitHubApp(settings)
        self.locks = RepoLocks(settings)
        self._label_log: LabelLog | None = None
        self._rates: Rates | None = None

    @property
    def label_log(self) -> LabelLog:
        """The downstream label log, opened on first use."""
        if self._label_log is None:
            from flagbot.bot.store.factory import open_label_log

            self._label_log = open_label_log(self.settings)
        return self._label_log

    @property
    def rates(self) -> Rates:
        """The slash commands' rate-limit counters, opened on first use."""
        if self._rates is None:
            from flagbot.bot.store.factory import open_rates

            self._rates = open_rates(self.settings)
        return self._rates

    def wants(self, event: str, payload: dict[str, Any]) -> bool:
        """True when some handler reacts to this delivery (the module function `wants`)."""
        return wants(event, payload)

    def run(self, delivery_id: str, event: str, payload: dict[str, Any]) -> dict[str, Any]:
        """Run every handler for the delivery to completion; raises on failure (the worker retries).

        The caller holds the pull request's lock (`worker.run_locked`); the git work takes
        the repository's.
        """
        handler = handler_for(event)
        if handler is None or not isinstance(payload, dict) or not handler.wants(payload):
            return {"delivery": delivery_id, "event": event, "skipped": "no handler wants it"}
        refused = handler.admit(self.settings, self.rates, payload) if handler.admit else ""
        if refused:  # before any GitHub call: a flood costs the queue a local check each
            log.info("delivery %s (%s) not run: %s", delivery_id, event, refused)
            return {"delivery": delivery_id, "event": event, "rate_limited": refused}
        installation = int(field_of(payload, "installation", "id"))
        try:
            return self._run(delivery_id, event, payload, installation)
        except GithubException as exc:
            if exc.status != 401:
                raise
            # The cached token was revoked before its expiry (uninstall/reinstall, key rotation):
            # mint a new one and run again; every step is idempotent, so a second pass is safe.
            self.github.forget_token(installation)
            return self._run(delivery_id, event, payload, installation)

    def _run(self, delivery_id: str, event: str, payload: dict[str, Any],
             installation: int) -> dict[str, Any]:
        full_name = str(field_of(payload, "repository", "full_name"))
        default_branch = str(field_of(payload, "repository", "default_branch"))
        clone_url = str(field_of(payload, "repository", "clone_url"))
        client = self.github.repo_client(installation, full_name)
        workspace = GitWorkspace(self.settings.state_dir, full_name, clone_url,
                                 token=lambda: self.github.installation_token(installation),
                                 lock=lambda: self.locks.hold(full_name))
        config, error = repo_config.load(client, default_branch)
        ctx = Context(self.settings, delivery_id, event, payload, full_name, default_branch,
                      client, workspace, config, error, label_log=self.label_log)
        return run_context(ctx)


__all__ = ["HANDLERS", "INTERNAL", "BotHandlers", "Handler", "handler_for", "run_context", "wants"]
