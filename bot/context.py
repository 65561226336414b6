"""What a handler gets: settings, the delivery, the repository config, a GitHub client, a workspace."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from flagbot.bot.feed.log import LabelLog
from flagbot.bot.github import ChangedFile, GitHubClient
from flagbot.bot.settings import Settings
from flagbot.hooks.config import ConfigError, RepoConfig


class PayloadError(ValueError):
    """The delivery lacks a field the handler needs (names the field)."""


def field_of(payload: dict[str, Any], *keys: str) -> Any:
    """`payload[k1][k2]...`, or PayloadError naming the dotted path that is missing."""
    value: Any = payload
    for i, key in enumerate(keys):
        if not isinstance(value, dict) or value.get(key) is None:
            raise PayloadError(f"payload has no {'.'.join(keys[: i + 1])}")
        value = value[key]
    return value


@dataclass(frozen=True)
class PullRequest:
    """The fields of a `pull_request` payload the handlers use."""

    number: int
    head_sha: str
    head_ref: str
    head_clone_url: str
    base_sha: str
    base_ref: str
    author: str
    is_fork: bool
    body: str = ""
    labels: tuple[str, ...] = ()
    head_full_name: str = ""
    maintainer_can_modify: bool = False

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> PullRequest:
        """Read the PR from a webhook payload (PayloadError when a field is missing)."""
        pr = field_of(payload, "pull_request")
        base_repo = field_of(payload, "repository", "full_name")
        # A fork's head.repo can be null when the fork was deleted; then only refs/pull/N/head works.
        head_repo = (pr.get("head") or {}).get("repo") or {}
        return cls(
            number=int(field_of(pr, "number")),
            head_sha=str(field_of(pr, "head", "sha")),
            head_ref=str(field_of(pr, "head", "ref")),
            head_clone_url=str(head_repo.get("clone_url") or ""),
            base_sha=str(field_of(pr, "base", "sha")),
            base_ref=str(field_of(pr, "base", "ref")),
            author=str((pr.get("user") or {}).get("login") or ""),
            is_fork=bool(head_repo) and head_repo.get("full_name") != base_repo,
            body=str(pr.get("body") or ""),
            labels=tuple(str(lab.get("name")) for lab in pr.get("labels") or []
                         if isinstance(lab, dict)),
            head_full_name=str(head_repo.get("full_name") or ""),
            maintainer_can_modify=bool(pr.get("maintainer_can_modify")),
        )


@dataclass(frozen=True)
class Pushed:
    """What a push did to one remote ref: `new`, `updated`, `forced`, `unchanged`, `rejected`
    (`detail` says why), or `dry-run`."""

    ref: str
    outcome: str
    detail: str = ""


class Workspace(Protocol):
    """Gives a checkout of a PR head for the checkers; git work happens only in here."""

    def checkout(self, pr: PullRequest) -> AbstractContextManager[Path]: ...
    def changed_files(self, pr: PullRequest) -> list[ChangedFile]: ...
    def objects(self, pr: PullRequest) -> Path: ...
    def fetch_commit(self, sha: str) -> bool: ...
    def push(self, url: str, refspecs: Sequence[str]) -> list[Pushed]: ...
    def held(self) -> AbstractContextManager[None]: ...


@dataclass
class Context:
    """Everything one delivery's handlers need; built by `BotHandlers` or by `flagbot replay --dry-run`."""

    settings: Settings
    delivery_id: str
    event: str
    payload: dict[str, Any]
    full_name: str
    default_branch: str
    client: GitHubClient
    workspace: Workspace
    config: RepoConfig | None
    config_error: ConfigError | None
    dry_run: bool = False
    # deliveries the worker records and runs later: {"id", "event", "payload", "delay_s"}
    follow_ups: list[dict[str, Any]] = field(default_factory=list)
    # where labeled PRs are recorded for the downstream feed (None: not recorded)
    label_log: LabelLog | None = None

    @property
    def action(self) -> str:
        """The payload's `action` ("" when the event has none)."""
        return str(self.payload.get("action") or "")
