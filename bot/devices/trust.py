"""Who may have a pull request's code run on device runners.

Self-hosted runners execute the PR's kernels. An author with at least `kernels.trusted_permission`
(default write) is trusted. For anyone else, only a writer's `/ok-to-test` lets runs start, and
only for the head the maintainer could have seen: the head the pull request had when the comment
was written (from the bot's own record of the heads it saw arrive, kept with their times in the
summary comment's hidden metadata), or a sha the comment names. A head pushed after the comment,
even one pushed before the bot got to the comment, is not approved.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from flagbot.bot.commands.base import allows
from flagbot.bot.devices.plan import Rules
from flagbot.bot.github import GitHubClient

APPROVALS = "ok_to_test"
HEADS = "heads"
KEPT = 20  # approvals and heads remembered per PR (newest last)


def approved(meta: dict[str, Any], sha: str) -> bool:
    """True when `/ok-to-test` was given for `sha`."""
    shas = meta.get(APPROVALS)
    return isinstance(shas, list) and sha in shas


def with_approval(meta: dict[str, Any], sha: str) -> dict[str, Any]:
    """`meta` with `sha` approved."""
    shas = [s for s in meta.get(APPROVALS) or [] if isinstance(s, str) and s != sha]
    return {**meta, APPROVALS: (shas + [sha])[-KEPT:]}


def when(text: str) -> datetime | None:
    """A GitHub timestamp (`2026-11-26T03:00:00Z`), or None when it is not one."""
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (TypeError, ValueError):
        return None


def with_head(meta: dict[str, Any], sha: str, seen_at: str) -> list[list[str]]:
    """The heads record with `sha` added (first sighting kept: a later delivery for the same
    head does not move its time)."""
    heads = [h for h in meta.get(HEADS) or []
             if isinstance(h, list) and len(h) == 2 and all(isinstance(x, str) for x in h)]
    if any(h[0] == sha for h in heads) or when(seen_at) is None:
        return heads[-KEPT:]
    return (heads + [[sha, seen_at]])[-KEPT:]


def head_at(meta: dict[str, Any], moment: str) -> str | None:
    """The newest recorded head that had arrived by `moment` (same second counts), or None."""
    at = when(moment)
    if at is None:
        return None
    best: tuple[datetime, str] | None = None
    for head in meta.get(HEADS) or []:
        if not (isinstance(head, list) and len(head) == 2 and isinstance(head[0], str)):
            continue
        seen = when(head[1])
        if seen is not None and seen <= at and (best is None or seen >= best[0]):
            best = (seen, head[0])
    return best[1] if best else None


def author_role(client: GitHubClient, login: str) -> str:
    """The author's role on the repository (`none` for an unknown login)."""
    return client.permission(login) if login else "none"


def trusted(rule: Rules, role: str) -> bool:
    """True when `role` is enough to run code on the devices without `/ok-to-test`."""
    return allows(role, rule.trusted_permission)
