"""What an event handler is: `Handler`, which each handler module declares once (`HANDLER`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flagbot.bot.context import Context
from flagbot.bot.settings import Settings
from flagbot.bot.store.rates import Rates


@dataclass(frozen=True)
class Handler:
    """One event's handler.

    `actions` are the webhook actions it acts on: ingest's interest filter (`bot/interest.py`)
    holds the same table as data, so the web process never loads handler code. `wants` is the
    finer, payload-level filter the worker applies (no I/O); `run` does the work.
    """

    event: str
    actions: frozenset[str]
    wants: Callable[[dict[str, Any]], bool]
    run: Callable[[Context], dict[str, Any]]
    help: str
    internal: bool = False  # a follow-up the worker schedules itself, never taken from a webhook
    # a check on the payload alone, before any GitHub call: a reason not to run at all ("": run)
    admit: Callable[[Settings, Rates, dict[str, Any]], str] | None = None
