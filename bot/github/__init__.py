"""GitHub as the handlers see it: a small repository-scoped client protocol and its value types.

`github/client.py` is the real client (PyGithub), `github/app.py` the App identity that mints
its tokens, and `bot/admin/dryrun.py` the recording client of `flagbot replay --dry-run`; the handlers
run unchanged on any of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class Label:
    """A repository label."""

    name: str
    color: str
    description: str = ""


@dataclass(frozen=True)
class ChangedFile:
    """One file of a pull request (`previous` is the old name of a rename)."""

    filename: str
    status: str = "modified"
    previous: str | None = None


@dataclass(frozen=True)
class Comment:
    """An issue (conversation) comment."""

    id: int
    body: str
    author: str


@dataclass(frozen=True)
class CheckRunRef:
    """What find-then-update needs to know about an existing check run."""

    id: int
    name: str
    status: str
    conclusion: str | None
    external_id: str | None
    annotations_count: int = 0
    started_at: float | None = None  # epoch seconds
    details_url: str | None = None
    title: str = ""
    summary: str = ""


@dataclass(frozen=True)
class ArtifactRef:
    """An Actions artifact of a workflow run, as listed (not downloaded)."""

    id: int
    name: str
    size: int
    expired: bool = False


class ArtifactTooLarge(Exception):
    """A download passed the byte limit the caller set; nothing more was read."""


@dataclass
class Action:
    """One write the bot made (or, in dry-run, would make); printed by `flagbot replay`."""

    kind: str
    detail: dict[str, Any] = field(default_factory=dict)

    def render(self) -> str:
        parts = " ".join(f"{k}={v!r}" for k, v in self.detail.items())
        return f"{self.kind} {parts}".rstrip()


class GitHubClient(Protocol):
    """The repository-scoped GitHub operations the handlers use; writes append to `actions`."""

    full_name: str
    bot_login: str
    actions: list[Action]

    def read_file(self, path: str, ref: str) -> str | None: ...
    def spare_writes(self) -> float: ...
    def pull_head(self, number: int) -> str: ...
    def pull_files(self, number: int) -> list[ChangedFile]: ...
    def repo_labels(self) -> dict[str, Label]: ...
    def create_label(self, label: Label) -> None: ...
    def issue_labels(self, number: int) -> list[str]: ...
    def add_labels(self, number: int, names: Sequence[str]) -> None: ...
    def remove_label(self, number: int, name: str) -> None: ...
    def check_runs(self, head_sha: str, name: str) -> list[CheckRunRef]: ...
    def create_check_run(self, head_sha: str, name: str, fields: dict[str, Any]) -> int: ...
    def update_check_run(self, run_id: int, fields: dict[str, Any]) -> None: ...
    def comments(self, number: int) -> list[Comment]: ...
    def create_comment(self, number: int, body: str) -> int: ...
    def edit_comment(self, comment_id: int, body: str) -> None: ...
    def react(self, comment_id: int, content: str) -> None: ...
    def permission(self, login: str) -> str: ...
    def pull_json(self, number: int) -> dict[str, Any]: ...
    def open_pulls(self, head_branch: str) -> list[int]: ...
    def create_pull(self, title: str, body: str, head_branch: str, base: str) -> int: ...
    def dispatch_workflow(self, workflow: str, ref: str, inputs: dict[str, str]) -> int | None: ...
    def workflow_run(self, run_id: int) -> dict[str, Any] | None: ...
    def workflow_runs(self, workflow: str, event: str = "workflow_dispatch") -> list[dict[str, Any]]: ...
    def cancel_workflow_run(self, run_id: int) -> bool: ...
    def run_artifacts(self, run_id: int) -> list[ArtifactRef]: ...
    def run_jobs(self, run_id: int) -> list[dict[str, Any]]: ...
    def download_artifact(self, artifact_id: int, max_bytes: int) -> bytes: ...
    def git_ref(self, ref: str) -> str | None: ...
    def set_git_ref(self, ref: str, sha: str, *, create: bool) -> None: ...
    def delete_git_ref(self, ref: str) -> bool: ...
    def branch_commits(self, branch: str, count: int) -> list[str]: ...
