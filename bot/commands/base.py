"""What a command is (`Command`), what it gets (`CommandContext`) and what it gives (`Outcome`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from flagbot.bot.commands.parse import Invocation
from flagbot.bot.context import Context, PullRequest, field_of
from flagbot.bot.github.client import ROLES


@dataclass(frozen=True)
class Command:
    """One slash command: its name, usage line, default minimum role, example and code."""

    name: str
    usage: str
    summary: str
    permission: str
    example: str
    run: Callable[[CommandContext, Invocation], Outcome]
    needs_pull: bool = True  # runs on pull request comments only


@dataclass
class Outcome:
    """A command's answer: markdown text, whether it worked, and facts for the result dict."""

    ok: bool
    text: str
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass
class CommandContext:
    """The delivery's context, the registry, and who asked with which role."""

    ctx: Context
    commands: Mapping[str, Command]
    login: str
    role: str
    _pull: PullRequest | None = None

    @property
    def number(self) -> int:
        """The issue or pull request the comment is on."""
        return int(field_of(self.ctx.payload, "issue", "number"))

    def pull(self) -> PullRequest:
        """The pull request as GitHub has it now (head, base, labels, body), read once."""
        if self._pull is None:
            raw = self.ctx.client.pull_json(self.number)
            self._pull = PullRequest.from_payload({**self.ctx.payload, "pull_request": raw})
        return self._pull


def required_role(command: Command, configured: Mapping[str, Any]) -> str:
    """The minimum role for `command`: `commands.<name>` of the config (`/name` also accepted,
    as a role or as `{permission: role}`), else the command's default."""
    spec = configured.get(command.name, configured.get("/" + command.name))
    if isinstance(spec, dict):
        spec = spec.get("permission")
    return spec if isinstance(spec, str) and spec in ROLES else command.permission


def allows(role: str, needed: str) -> bool:
    """True when `role` is at least `needed`."""
    return ROLES.index(role if role in ROLES else "none") >= ROLES.index(needed)
