"""Tracking issues the bot keeps (one per subject, found by title and label): PyGithub writes,
paced like every other write, and a dry-run twin that reads the same way and only says what it
would write.

Find, compare, then write: an issue is looked up among the open issues carrying its label that
the App opened, by exact title; its body is rewritten only when it changed, so a run that finds
nothing new writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from github import Github

from flagbot.bot.github import Action, Label


@dataclass(frozen=True)
class TrackedIssue:
    """An open issue the bot keeps."""

    number: int
    title: str
    body: str


class IssueWriter(Protocol):
    """What keeping tracking issues needs; writes append to `actions`."""

    actions: list[Action]

    def open_issues(self, label: str) -> list[TrackedIssue]: ...
    def label_exists(self, name: str) -> bool: ...
    def create_label(self, label: Label) -> None: ...
    def create(self, title: str, body: str, label: str) -> int: ...
    def edit_body(self, number: int, body: str) -> None: ...
    def close(self, number: int, comment: str) -> None: ...


class PyGithubIssues:
    """IssueWriter over PyGithub for one repository."""

    def __init__(self, gh: Github, full_name: str, bot_login: str,
                 pace: Callable[[], float] = lambda: 0.0) -> None:
        self._repo = gh.get_repo(full_name)  # lazy: the Github object is lazy
        self.bot_login = bot_login
        self._pace = pace
        self.actions: list[Action] = []

    def open_issues(self, label: str) -> list[TrackedIssue]:
        found = []
        for issue in self._repo.get_issues(state="open", labels=[label], direction="asc"):
            if issue.pull_request is None and issue.user is not None \
                    and issue.user.login == self.bot_login:
                found.append(TrackedIssue(issue.number, issue.title, issue.body or ""))
        return found

    def label_exists(self, name: str) -> bool:
        # listed, not fetched by name: a lazy client's get_label would not ask GitHub at all
        return name.lower() in {lab.name.lower() for lab in self._repo.get_labels()}

    def create_label(self, label: Label) -> None:
        self._pace()
        self._repo.create_label(label.name, label.color, label.description)
        self.actions.append(Action("label.create", {"name": label.name}))

    def create(self, title: str, body: str, label: str) -> int:
        self._pace()
        issue = self._repo.create_issue(title=title, body=body, labels=[label])
        self.actions.append(Action("issue.create", {"number": issue.number, "title": title}))
        return int(issue.number)

    def edit_body(self, number: int, body: str) -> None:
        self._pace()
        self._repo.get_issue(number).edit(body=body)
        self.actions.append(Action("issue.edit", {"number": number, "chars": len(body)}))

    def close(self, number: int, comment: str) -> None:
        issue = self._repo.get_issue(number)
        self._pace()
        issue.create_comment(comment)
        self._pace()
        issue.edit(state="closed", state_reason="completed")
        self.actions.append(Action("issue.close", {"number": number}))


class DryRunIssues:
    """Reads through a real IssueWriter, records the writes it would make instead of making them."""

    def __init__(self, real: IssueWriter) -> None:
        self._real = real
        self.actions: list[Action] = []
        self.bodies: dict[str, str] = {}  # title or #number -> the body it would write

    def open_issues(self, label: str) -> list[TrackedIssue]:
        return self._real.open_issues(label)

    def label_exists(self, name: str) -> bool:
        return self._real.label_exists(name)

    def create_label(self, label: Label) -> None:
        self.actions.append(Action("label.create", {"name": label.name}))

    def create(self, title: str, body: str, label: str) -> int:
        self.actions.append(Action("issue.create", {"title": title, "label": label}))
        self.bodies[title] = body
        return 0

    def edit_body(self, number: int, body: str) -> None:
        self.actions.append(Action("issue.edit", {"number": number, "chars": len(body)}))
        self.bodies[f"#{number}"] = body

    def close(self, number: int, comment: str) -> None:
        self.actions.append(Action("issue.close", {"number": number, "comment": comment}))


def describe(actions: list[Action]) -> list[dict[str, Any]]:
    """The actions as plain dicts (for JSON output and logs)."""
    return [{"kind": a.kind, **a.detail} for a in actions]
