"""`GitHubApp`: the App's identity towards GitHub, and the caches that go with it.

One object per process (the worker or `flagbot replay` creates it; nothing is cached at import):
it signs the App's JWT and reuses it, mints installation tokens and reuses them until shortly
before they expire, knows the App's login, and holds each installation's write pacing bucket.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from github import Auth, Github, GithubException, GithubIntegration

from flagbot.bot.github.client import PyGithubClient
from flagbot.bot.github.pacing import WriteBucket
from flagbot.bot.github.retry import make_retry
from flagbot.bot.settings import Settings

# Refresh a token this long before GitHub says it expires, so a delivery never starts with one
# that dies mid-way (tokens live 1 h: "authenticating as a GitHub App installation").
TOKEN_REFRESH_MARGIN = timedelta(minutes=5)
# PyGithub signs JWTs valid for 5 minutes; reuse one for 4.
JWT_REUSE_S = 240.0
# The most GitHub serves per page: a 300-file PR is 3 requests instead of 10.
PER_PAGE = 100


class AppCredentialsError(RuntimeError):
    """The App cannot act at all: credentials missing, or GitHub refuses them (401) or does not
    know the installation (404). Retrying cannot help until a person fixes the configuration,
    so the worker fails the delivery at once (`permanent`)."""

    permanent = True


@dataclass
class _Token:
    token: str
    expires_at: datetime


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


class GitHubApp:
    """The App for one process: JWT, installation tokens, bot login and write buckets, cached."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._integration: GithubIntegration | None = None
        self._tokens: dict[int, _Token] = {}
        self._slug: str | None = None
        self._buckets: dict[int, WriteBucket] = {}

    def _app_client(self) -> GithubIntegration:
        """The App-level client (JWT auth); call with the lock held."""
        settings = self.settings
        if not settings.app_id or not settings.private_key:
            raise AppCredentialsError(
                "GITHUB_APP_ID and GITHUB_PRIVATE_KEY (or GITHUB_PRIVATE_KEY_PATH) must be set to "
                "act as the GitHub App; set them in the server's environment")
        if self._integration is None:
            auth = CachedAppAuth(settings.app_id, settings.private_key)
            # Two calls per process at most (token, slug): no spacing; retries still apply.
            self._integration = GithubIntegration(auth=auth, base_url=settings.api_url,
                                                  retry=make_retry(),
                                                  seconds_between_requests=None)
        return self._integration

    def installation_token(self, installation_id: int) -> str:
        """An installation token, fetched once and reused until `TOKEN_REFRESH_MARGIN` before expiry."""
        with self._lock:
            cached = self._tokens.get(installation_id)
            if cached and cached.expires_at - TOKEN_REFRESH_MARGIN > datetime.now(timezone.utc):
                return cached.token
            try:
                granted = self._app_client().get_access_token(installation_id)
            except GithubException as exc:
                if exc.status in (401, 404):
                    raise AppCredentialsError(
                        f"GitHub answered {exc.status} to the App's token request for installation "
                        f"{installation_id}: check GITHUB_APP_ID and the private key, and that the "
                        "App is still installed") from exc
                raise
            expires = granted.expires_at
            if expires.tzinfo is None:
                expires = expires.replace(tzinfo=timezone.utc)
            self._tokens[installation_id] = _Token(granted.token, expires)
            return granted.token

    def forget_token(self, installation_id: int) -> None:
        """Drop one installation's cached token (GitHub revoked it early: a 401)."""
        with self._lock:
            self._tokens.pop(installation_id, None)

    def bot_login(self) -> str:
        """The login GitHub shows on the App's comments: `<app slug>[bot]` (GET /app, cached)."""
        with self._lock:
            if self._slug is None:
                self._slug = self._app_client().get_app().slug
            return f"{self._slug}[bot]"

    def installation_of(self, full_name: str) -> int:
        """The id of the App's installation on `full_name` (GET /repos/{o}/{r}/installation)."""
        owner, _, name = full_name.partition("/")
        with self._lock:
            integration = self._app_client()
        try:
            return int(integration.get_repo_installation(owner, name).id)
        except GithubException as exc:
            if exc.status in (401, 404):
                raise AppCredentialsError(
                    f"GitHub answered {exc.status} when asked for the App's installation on "
                    f"{full_name}: check the name, GITHUB_APP_ID and the private key, and that "
                    "the App is installed there") from exc
            raise

    def installation_ids(self) -> list[int]:
        """Every installation of the App (GET /app/installations)."""
        with self._lock:
            integration = self._app_client()
        return [int(i.id) for i in integration.get_installations()]

    def bucket(self, installation_id: int) -> WriteBucket:
        """The write pacing bucket of one installation, shared by this process's threads."""
        with self._lock:
            if installation_id not in self._buckets:
                self._buckets[installation_id] = WriteBucket(self.settings.write_burst,
                                                             self.settings.write_spacing_s)
            return self._buckets[installation_id]

    def connect(self, installation_id: int) -> Github:
        """A PyGithub client for one delivery, authenticated with the cached installation token."""
        # One Github per delivery: PyGithub's connection object is not safe to share between threads.
        return Github(
            auth=Auth.Token(self.installation_token(installation_id)),
            base_url=self.settings.api_url,
            retry=make_retry(),
            seconds_between_requests=None,
            seconds_between_writes=None,  # paced per installation by the bucket instead
            per_page=PER_PAGE,
            lazy=True,
        )

    def repo_client(self, installation_id: int, full_name: str) -> PyGithubClient:
        """The real client for one delivery on `full_name`."""
        bucket = self.bucket(installation_id)
        return PyGithubClient(self.connect(installation_id), full_name, self.bot_login(),
                              pace=bucket.acquire, spare=bucket.spare)
