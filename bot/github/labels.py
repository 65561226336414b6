"""Label writes: create the repository's missing labels, add them to a pull request, remove
stale ones. A name GitHub refuses costs only that label."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from github import GithubException

from flagbot.bot.github import GitHubClient, Label

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LabelChange:
    """What to do to the PR's labels, and the bot-added set after doing it."""

    to_create: tuple[Label, ...]
    to_add: tuple[str, ...]
    to_remove: tuple[str, ...]
    bot_labels: tuple[str, ...]


def remove_stale(client: GitHubClient, number: int, change: LabelChange) -> None:
    """Remove the bot-added labels whose paths left the PR."""
    for name in change.to_remove:
        client.remove_label(number, name)


def add_wanted(client: GitHubClient, number: int, change: LabelChange) -> None:
    """Create missing repository labels (colour, description), then add them to the PR."""
    refused: set[str] = set()
    for label in change.to_create:
        try:
            client.create_label(label)
        except GithubException as exc:
            if exc.status != 422:
                raise
            # already_exists: another worker created it a moment ago, which is what we wanted;
            # any other 422 (a name GitHub refuses) drops that label, not the rest
            if "already_exists" not in str(exc.data):
                log.warning("label %r refused by GitHub: %s", label.name, exc.data)
                refused.add(label.name)
    names = [n for n in change.to_add if n not in refused]
    if not names:
        return
    try:
        client.add_labels(number, names)
    except GithubException as exc:
        if exc.status != 422:
            raise
        for name in names:  # one at a time: a refused name must not cost the others
            try:
                client.add_labels(number, [name])
            except GithubException as one:
                if one.status != 422:
                    raise
                log.warning("label %r refused by GitHub: %s", name, one.data)
