"""Who may have a pull request's code run on device runners.

Self-hosted runners execute the PR's kernels. An author with at least `kernels.trusted_permission`
(default write) is trusted. For anyone else, only a writer's `/ok-to-test` lets runs start, and
only for the head sha it was given on: the approval is kept per sha in the summary comment's
hidden metadata, so a new push needs a new approval.
"""

from __future__ import annotations

from typing import Any

from flagbot.bot.commands.base import allows
from flagbot.bot.devices.plan import Rules
from flagbot.bot.github import GitHubClient

APPROVALS = "ok_to_test"
KEPT = 20  # approvals remembered per PR (newest last)


def approved(meta: dict[str, Any], sha: str) -> bool:
    """True when `/ok-to-test` was given for `sha`."""
    shas = meta.get(APPROVALS)
    return isinstance(shas, list) and sha in shas


def with_approval(meta: dict[str, Any], sha: str) -> dict[str, Any]:
    """`meta` with `sha` approved."""
    shas = [s for s in meta.get(APPROVALS) or [] if isinstance(s, str) and s != sha]
    return {**meta, APPROVALS: (shas + [sha])[-KEPT:]}


def author_role(client: GitHubClient, login: str) -> str:
    """The author's role on the repository (`none` for an unknown login)."""
    return client.permission(login) if login else "none"


def trusted(rule: Rules, role: str) -> bool:
    """True when `role` is enough to run code on the devices without `/ok-to-test`."""
    return allows(role, rule.trusted_permission)
