"""Comment writes: the bot's sticky comments (the summary, a command's reply) are created once
and edited after."""

from __future__ import annotations

from flagbot.bot.github import Comment, GitHubClient


def upsert(client: GitHubClient, number: int, existing: Comment | None, body: str) -> tuple[str, int | None]:
    """Create the comment, or edit it when the body changed; returns (what was done, id)."""
    if existing is None:
        return "created", client.create_comment(number, body)
    if existing.body == body:
        return "unchanged", existing.id
    client.edit_comment(existing.id, body)
    return "edited", existing.id


def write(client: GitHubClient, number: int, existing: Comment | None, body: str) -> tuple[str, int]:
    """Create the comment, or edit it (even when the body is the same); returns (what, id)."""
    if existing is None:
        return "created", client.create_comment(number, body)
    client.edit_comment(existing.id, body)
    return "edited", existing.id
