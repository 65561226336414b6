"""GitHub access as the App: installation tokens, retries, spaced writes, the client handlers use.

Handlers talk to `GitHubClient`, a small repository-scoped protocol; `PyGithubClient` is the real
one (PyGithub over the wire, `settings.api_url` everywhere) and `bot.dryrun.DryRunClient` the one
`flagbot replay --dry-run` uses, so both run the same handler code.
"""

from __future__ import annotations

import inspect
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Protocol

from github import Auth, Github, GithubException, GithubIntegration, GithubRetry
from github.GithubException import RateLimitExceededExceedsMaxWait, UnknownObjectException
from github.IssueComment import IssueComment
from urllib3 import Retry

from flagbot.bot import pacing
from flagbot.bot.settings import Settings

# Refresh a token this long before GitHub says it expires, so a delivery never starts with one
# that dies mid-way (tokens live 1 h: "authenticating as a GitHub App installation").
TOKEN_REFRESH_MARGIN = timedelta(minutes=5)
# GitHub's rate-limit guidance: obey retry-after; with no header, wait at least a minute.
SECONDARY_RATE_WAIT_S = 60.0
MAX_RATE_LIMIT_WAIT_S = 900.0
RETRY_TOTAL = 6
# PyGithub signs JWTs valid for 5 minutes; reuse one for 4.
JWT_REUSE_S = 240.0
# The most GitHub serves per page: a 300-file PR is 3 requests instead of 10.
PER_PAGE = 100


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


def _metrics() -> Any:
    # Imported late: bot.metrics belongs to the ingest side and pulls in prometheus_client.
    from flagbot.bot import metrics

    return metrics


def retry_reason(status: int, headers: Any, message: str = "") -> str | None:
    """Why a response is retried: "5xx", "secondary_rate_limit", "primary_rate_limit" or None."""
    if 500 <= status <= 599:
        return "5xx"
    if status not in (403, 429):
        return None
    if headers.get("X-RateLimit-Remaining") == "0" and not headers.get("Retry-After"):
        return "primary_rate_limit"
    if headers.get("Retry-After") or "secondary rate limit" in message.lower():
        return "secondary_rate_limit"
    if message.lower().startswith("api rate limit exceeded"):
        return "primary_rate_limit"
    return None


class FlagbotRetry(GithubRetry):
    """GithubRetry that also counts every call and retry, and honours header-only primary limits."""

    def is_retry(self, method: str, status_code: int, has_retry_after: bool = False) -> bool:
        # urllib3 asks this once per response, retried or not: the one place that sees them all.
        _metrics().github_call(method, status_code)
        return bool(super().is_retry(method, status_code, has_retry_after))

    def increment(self, method: str | None = None, url: str | None = None,  # type: ignore[override]
                  response: Any = None, error: Exception | None = None,
                  _pool: Any = None, _stacktrace: Any = None) -> Retry:
        reason = retry_reason(response.status, response.headers) if response is not None else None
        if reason == "primary_rate_limit":
            retry = self._primary_limit(method, url, response, error, _pool, _stacktrace)
        else:
            retry = super().increment(method, url, response, error, _pool, _stacktrace)
        if response is not None and response.status in (403, 429) and reason is None:
            # GithubRetry only lets through 403s whose body names a rate limit; with no
            # x-ratelimit-remaining: 0 header that is the secondary one.
            reason = "secondary_rate_limit"
        if reason is not None:
            _metrics().github_retry(reason)
        return retry

    def _primary_limit(self, method: str | None, url: str | None, response: Any,
                       error: Exception | None, _pool: Any, _stacktrace: Any) -> Retry:
        # GitHub: "if x-ratelimit-remaining is 0, do not retry until after x-ratelimit-reset".
        reset = response.headers.get("X-RateLimit-Reset", "")
        wait = max(int(reset) - time.time(), 0.0) + 1.0 if str(reset).isdigit() else 60.0
        if self.max_rate_limit_wait is not None and wait > self.max_rate_limit_wait:
            raise RateLimitExceededExceedsMaxWait(response.status, None, dict(response.headers), wait=wait)
        retry = Retry.increment(self, method, url, response, error, _pool, _stacktrace)
        retry.get_backoff_time = lambda: wait  # type: ignore[method-assign]
        return retry


def make_retry(*, secondary_rate_wait: float = SECONDARY_RATE_WAIT_S,
               max_rate_limit_wait: float = MAX_RATE_LIMIT_WAIT_S) -> FlagbotRetry:
    """The retry policy for every request: 5xx with back-off, 403/429 rate limits by their headers."""
    extra: dict[str, Any] = {}
    if "retry_after_max" in inspect.signature(Retry.__init__).parameters:  # urllib3 >= 2.5
        extra["retry_after_max"] = int(MAX_RATE_LIMIT_WAIT_S)
    return FlagbotRetry(
        total=RETRY_TOTAL,
        backoff_factor=0.5,
        backoff_max=30,
        secondary_rate_wait=secondary_rate_wait,
        max_rate_limit_wait=max_rate_limit_wait,
        status_forcelist=[*range(500, 600), 429],
        # PATCH too: check-run and comment edits are idempotent, and 502s hit them as well
        allowed_methods=frozenset({"GET", "HEAD", "POST", "PATCH", "PUT", "DELETE"}),
        **extra,
    )


@dataclass
class _Token:
    token: str
    expires_at: datetime


_TOKENS: dict[tuple[str, str, int], _Token] = {}
_SLUGS: dict[tuple[str, str], str] = {}
_TOKEN_LOCK = threading.Lock()


class CachedAppAuth(Auth.AppAuth):
    """AppAuth reusing its JWT until a minute before expiry: signing parses the RSA key (~0.1 s)."""

    _jwt: str = ""
    _jwt_until: float = 0.0

    @property
    def token(self) -> str:
        now = time.time()
        if not self._jwt or now >= self._jwt_until:
            self._jwt = self.create_jwt()
            self._jwt_until = now + JWT_REUSE_S
        return self._jwt


_INTEGRATIONS: dict[tuple[str, str], GithubIntegration] = {}


def _integration(settings: Settings) -> GithubIntegration:
    """The App-level client (JWT auth), one per (API URL, App id); call with _TOKEN_LOCK held."""
    if not settings.app_id or not settings.private_key:
        raise RuntimeError("GITHUB_APP_ID and GITHUB_PRIVATE_KEY (or GITHUB_PRIVATE_KEY_PATH) must be set "
                           "to act as the GitHub App; set them in the server's environment")
    key = (settings.api_url, str(settings.app_id))
    if key not in _INTEGRATIONS:
        auth = CachedAppAuth(settings.app_id, settings.private_key)
        # Two calls per process at most (token, slug): no spacing; retries still apply.
        _INTEGRATIONS[key] = GithubIntegration(auth=auth, base_url=settings.api_url, retry=make_retry(),
                                               seconds_between_requests=None)
    return _INTEGRATIONS[key]


def installation_token(settings: Settings, installation_id: int) -> str:
    """An installation token, fetched once and reused until `TOKEN_REFRESH_MARGIN` before expiry."""
    key = (settings.api_url, str(settings.app_id), installation_id)
    with _TOKEN_LOCK:
        cached = _TOKENS.get(key)
        if cached and cached.expires_at - TOKEN_REFRESH_MARGIN > datetime.now(timezone.utc):
            return cached.token
        granted = _integration(settings).get_access_token(installation_id)
        expires = granted.expires_at
        if expires.tzinfo is None:
            expires = expires.replace(tzinfo=timezone.utc)
        _TOKENS[key] = _Token(granted.token, expires)
        return granted.token


def bot_login(settings: Settings) -> str:
    """The login GitHub shows on the App's comments: `<app slug>[bot]` (GET /app, cached)."""
    key = (settings.api_url, str(settings.app_id))
    with _TOKEN_LOCK:
        if key not in _SLUGS:
            _SLUGS[key] = _integration(settings).get_app().slug
        return f"{_SLUGS[key]}[bot]"


def forget_token(settings: Settings, installation_id: int) -> None:
    """Drop one installation's cached token (GitHub revoked it early: a 401)."""
    with _TOKEN_LOCK:
        _TOKENS.pop((settings.api_url, str(settings.app_id), installation_id), None)


def forget_tokens() -> None:
    """Drop cached tokens and slugs (tests that restart the emulator use this)."""
    with _TOKEN_LOCK:
        _TOKENS.clear()
        _SLUGS.clear()
        _INTEGRATIONS.clear()


def connect(settings: Settings, installation_id: int) -> Github:
    """A PyGithub client for one delivery, authenticated with the cached installation token."""
    # One Github per delivery: PyGithub's connection object is not safe to share between threads.
    return Github(
        auth=Auth.Token(installation_token(settings, installation_id)),
        base_url=settings.api_url,
        retry=make_retry(),
        seconds_between_requests=None,
        seconds_between_writes=None,  # paced per installation by PyGithubClient (bot/pacing.py)
        per_page=PER_PAGE,
        lazy=True,
    )


def is_not_found(exc: GithubException) -> bool:
    """True for 404s (PyGithub's UnknownObjectException or a bare 404)."""
    return isinstance(exc, UnknownObjectException) or exc.status == 404


class PyGithubClient:
    """`GitHubClient` over PyGithub for one repository; records each write in `actions`."""

    def __init__(self, gh: Github, full_name: str, login: str,
                 pace: Callable[[], float] = lambda: 0.0) -> None:
        self._gh = gh
        self._pace = pace
        self._repo = gh.get_repo(full_name)  # lazy: the Github object is lazy
        self.full_name = full_name
        self.bot_login = login
        self.actions: list[Action] = []
        self._comments: dict[int, Any] = {}
        self._runs: dict[int, Any] = {}

    def read_file(self, path: str, ref: str) -> str | None:
        try:
            content = self._repo.get_contents(path, ref=ref)
        except GithubException as exc:
            if is_not_found(exc):
                return None
            raise
        if isinstance(content, list):  # a folder where a file was expected
            return None
        return content.decoded_content.decode("utf-8", errors="replace")

    def pull_head(self, number: int) -> str:
        return str(self._repo.get_pull(number).head.sha)

    def pull_files(self, number: int) -> list[ChangedFile]:
        pull = self._repo.get_pull(number)
        return [ChangedFile(f.filename, f.status, f.previous_filename) for f in pull.get_files()]

    def repo_labels(self) -> dict[str, Label]:
        return {lab.name: Label(lab.name, lab.color, lab.description or "") for lab in self._repo.get_labels()}

    def create_label(self, label: Label) -> None:
        self._pace()
        self._repo.create_label(label.name, label.color, label.description)
        self.actions.append(Action("label.create", {"name": label.name, "color": label.color}))

    def issue_labels(self, number: int) -> list[str]:
        return [lab.name for lab in self._repo.get_issue(number).get_labels()]

    def add_labels(self, number: int, names: Sequence[str]) -> None:
        self._pace()
        self._repo.get_issue(number).add_to_labels(*names)
        self.actions.append(Action("label.add", {"pr": number, "names": list(names)}))

    def remove_label(self, number: int, name: str) -> None:
        self._pace()
        try:
            self._repo.get_issue(number).remove_from_labels(name)
        except GithubException as exc:
            if not is_not_found(exc):  # someone removed it between our read and this call
                raise
        self.actions.append(Action("label.remove", {"pr": number, "name": name}))

    def check_runs(self, head_sha: str, name: str) -> list[CheckRunRef]:
        refs = []
        for run in self._repo.get_commit(head_sha).get_check_runs(check_name=name):
            self._runs[run.id] = run
            count = run.output.annotations_count if run.output is not None else 0
            refs.append(CheckRunRef(run.id, run.name, run.status, run.conclusion, run.external_id,
                                    int(count or 0)))
        return refs

    def create_check_run(self, head_sha: str, name: str, fields: dict[str, Any]) -> int:
        self._pace()
        run = self._repo.create_check_run(name=name, head_sha=head_sha, **fields)
        self._runs[run.id] = run
        self.actions.append(Action("check_run.create", _run_detail(name, fields)))
        return int(run.id)

    def update_check_run(self, run_id: int, fields: dict[str, Any]) -> None:
        run = self._runs.get(run_id) or self._repo.get_check_run(run_id)
        self._pace()
        run.edit(**fields)
        self.actions.append(Action("check_run.update", {"id": run_id, **_run_detail(run.name, fields)}))

    def comments(self, number: int) -> list[Comment]:
        out = []
        for c in self._repo.get_issue(number).get_comments():
            self._comments[c.id] = c
            out.append(Comment(c.id, c.body or "", c.user.login if c.user else ""))
        return out

    def create_comment(self, number: int, body: str) -> int:
        self._pace()
        c = self._repo.get_issue(number).create_comment(body)
        self._comments[c.id] = c
        self.actions.append(Action("comment.create", {"pr": number, "chars": len(body)}))
        return int(c.id)

    def edit_comment(self, comment_id: int, body: str) -> None:
        c = self._comments.get(comment_id)
        if c is None:  # lazy object: PATCH straight away, no GET first
            c = IssueComment(self._repo.requester, url=f"{self._repo.url}/issues/comments/{comment_id}")
        self._pace()
        c.edit(body)
        self.actions.append(Action("comment.edit", {"id": comment_id, "chars": len(body)}))


def _run_detail(name: str, fields: dict[str, Any]) -> dict[str, Any]:
    output = fields.get("output") or {}
    detail: dict[str, Any] = {"name": name}
    for key in ("status", "conclusion"):
        if key in fields:
            detail[key] = fields[key]
    if output:
        detail["title"] = output.get("title")
        detail["annotations"] = len(output.get("annotations") or [])
    return detail


def repo_client(settings: Settings, installation_id: int, full_name: str) -> PyGithubClient:
    """The real client for one delivery on `full_name`."""
    bucket = pacing.bucket_for(settings.api_url, installation_id, settings.write_burst,
                               settings.write_spacing_s)
    return PyGithubClient(connect(settings, installation_id), full_name, bot_login(settings),
                          pace=bucket.acquire)
