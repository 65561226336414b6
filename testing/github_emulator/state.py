"""The emulator's in-memory model of GitHub: repositories, issues and PRs, labels, comments, checks."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from testing.github_emulator import gitstore


def iso(ts: float | None = None) -> str:
    """UTC ISO-8601 timestamp as GitHub writes it (`2026-11-26T03:00:00Z`)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if ts is None else ts))


@dataclass(frozen=True)
class EmuRepo:
    """A repository the emulator serves; `clone_url` is a file:// URL of its bare repository."""

    full_name: str
    id: int
    bare_path: Path
    clone_url: str
    default_branch: str
    fork_of: str | None = None

    @property
    def owner(self) -> str:
        """The owner login (the part before the slash)."""
        return self.full_name.split("/", 1)[0]

    @property
    def name(self) -> str:
        """The repository name (the part after the slash)."""
        return self.full_name.split("/", 1)[1]


@dataclass(frozen=True)
class Call:
    """One request the emulator answered (`ts`: when it arrived); `path` is percent-decoded, `query`
    keeps the last value per key, `json` is the parsed body (None when empty or not JSON)."""

    method: str
    path: str
    query: dict[str, str]
    json: object | None
    status: int
    ts: float
    raw_path: str = ""
    auth: str = ""  # "app" (JWT), "installation" (token), "" (none or invalid)


@dataclass
class Issue:
    """An issue or a pull request (they share numbers, labels and comments, as on GitHub)."""

    number: int
    id: int
    title: str
    body: str | None
    user: str
    created_at: str
    updated_at: str
    state: str = "open"
    labels: list[str] = field(default_factory=list)
    is_pull: bool = False
    # Pull request fields
    head_ref: str = ""
    head_sha: str = ""
    head_repo: str = ""  # full name of the repository that holds the head branch (a fork or the same)
    base_ref: str = ""
    base_sha: str = ""
    draft: bool = False
    maintainer_can_modify: bool = False  # a fork's author lets maintainers (and Apps) push
    closed_at: str | None = None
    merged_at: str | None = None
    merge_commit_sha: str | None = None


@dataclass
class Comment:
    """An issue/PR conversation comment."""

    id: int
    number: int
    body: str
    user: str
    created_at: str
    updated_at: str
    reactions: list[tuple[int, str, str]] = field(default_factory=list)  # (id, user, content)


@dataclass
class CheckRun:
    """A check run with every annotation ever sent to it (GitHub appends on each update)."""

    id: int
    name: str
    head_sha: str
    status: str
    conclusion: str | None
    started_at: str
    completed_at: str | None
    external_id: str | None = None
    details_url: str | None = None
    output: dict[str, Any] = field(default_factory=dict)
    annotations: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Artifact:
    """An Actions artifact: its zip bytes as uploaded (`expired` ones cannot be downloaded)."""

    id: int
    name: str
    run_id: int
    data: bytes
    expired: bool = False


@dataclass
class WorkflowRun:
    """A workflow run started by a dispatch (or by a test)."""

    id: int
    workflow: str  # the file name under .github/workflows/
    display_title: str
    event: str
    head_branch: str
    head_sha: str
    inputs: dict[str, str]
    created_at: str
    status: str = "queued"  # queued, in_progress, completed
    conclusion: str | None = None
    job_id: int = 0
    runner_labels: list[str] = field(default_factory=list)
    runner_name: str | None = None  # the runner that took the job (default `runner-1` once taken)


@dataclass
class RepoState:
    """Everything the emulator knows about one repository."""

    repo: EmuRepo
    labels: dict[str, dict[str, Any]] = field(default_factory=dict)  # lower-cased name -> label
    issues: dict[int, Issue] = field(default_factory=dict)
    comments: dict[int, Comment] = field(default_factory=dict)
    check_runs: dict[int, CheckRun] = field(default_factory=dict)
    workflow_runs: dict[int, WorkflowRun] = field(default_factory=dict)
    artifacts: dict[int, Artifact] = field(default_factory=dict)
    permissions: dict[str, str] = field(default_factory=dict)
    files_cache: dict[tuple[str, str], list[gitstore.DiffFile]] = field(default_factory=dict)
    commits_cache: dict[tuple[str, str], int] = field(default_factory=dict)

    def label(self, name: str) -> dict[str, Any] | None:
        """The repository label called `name` (GitHub matches names case-insensitively)."""
        return self.labels.get(name.lower())


class State:
    """All repositories plus id counters; every access holds `lock` (the server holds it per request)."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.repos: dict[str, RepoState] = {}
        self.calls: list[Call] = []
        self._next = 3_000_000_000  # above 2**31 like GitHub ids, so int32 assumptions fail in tests
        self.seq = 0  # commit clock of emulator-made commits
        # App manifest flow: code -> (manifest, owner, expiry epoch); Apps registered through it
        self.manifests: dict[str, tuple[dict[str, Any], str, float]] = {}
        self.registered_apps: list[dict[str, Any]] = []

    def next_id(self) -> int:
        """A fresh object id, unique across all kinds (GitHub ids are global too)."""
        with self.lock:
            self._next += 1
            return self._next

    def repo(self, full_name: str) -> RepoState | None:
        """The repository called `full_name` (case-insensitive like GitHub), or None."""
        st = self.repos.get(full_name.lower())
        return st

    def pr_files(self, rs: RepoState, issue: Issue) -> list[gitstore.DiffFile]:
        """The PR's changed files, computed once per (base sha, head sha)."""
        key = (issue.base_sha, issue.head_sha)
        files = rs.files_cache.get(key)
        if files is None:
            files = gitstore.diff_files(rs.repo.bare_path, issue.base_sha, issue.head_sha)
            rs.files_cache[key] = files
        return files

    def pr_commits(self, rs: RepoState, issue: Issue) -> int:
        """How many commits the PR has (base..head), computed once per (base sha, head sha)."""
        key = (issue.base_sha, issue.head_sha)
        count = rs.commits_cache.get(key)
        if count is None:
            out = gitstore.git(rs.repo.bare_path, "rev-list", "--count", f"{issue.base_sha}..{issue.head_sha}")
            count = rs.commits_cache[key] = int(out.decode().strip() or 0)
        return count
