"""Server settings: the only place in bot/ that reads environment variables.

The variables are listed in docs/bot.md ("Settings"). Processes hand settings to their children
(serve -> gunicorn) through the child's environment, read here again; modules never pass values
to each other through `os.environ`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

PUBLIC_API_URL = "https://api.github.com"
CHECKPOINTS_ENV = "FLAGBOT_SQLITE_CHECKPOINTS"
METRICS_ENV = "PROMETHEUS_MULTIPROC_DIR"
LOG_FORMAT_ENV = "FLAGBOT_LOG_FORMAT"
STARTUP_WARNED_ENV = "FLAGBOT_STARTUP_WARNED"


@dataclass(frozen=True)
class Settings:
    """Everything the app, the worker and the handlers need to know about their environment."""

    app_id: str | None = None
    private_key: str | None = field(default=None, repr=False)
    webhook_secret: str | None = field(default=None, repr=False)
    # a second secret accepted during rotation (GITHUB_WEBHOOK_SECRET_PREVIOUS)
    webhook_secret_previous: str | None = field(default=None, repr=False)
    api_url: str = PUBLIC_API_URL
    state_dir: Path = Path(".flagbot")
    redis_url: str | None = None
    port: int = 8000
    worker_threads: int = 2
    # writes to GitHub per installation: `write_burst` at once, then one per `write_spacing_s`
    # (GitHub's guidance: about a second between content-creating requests; bot/github/pacing.py)
    write_spacing_s: float = 1.0
    write_burst: int = 10
    max_body_bytes: int = 25 * 1024 * 1024
    # Slow clients (bot/entry/serving/reception.py): a request's headers must arrive within
    # `request_header_timeout_s` and all of it within `request_timeout_s` of its first byte
    # (of the connection, for a new one); at most `max_pending_connections` requests per
    # gunicorn worker may be arriving at once, holding `max_pending_bytes` between them (the
    # oldest is closed to make room)
    request_header_timeout_s: float = 5.0
    request_timeout_s: float = 10.0
    max_pending_connections: int = 256
    max_pending_bytes: int = 64 * 1024 * 1024
    # The checks of a pull request's files run in a child process with these limits
    # (bot/work/sandbox.py): address space in MiB, and wall-clock seconds
    check_memory_mb: int = 1024
    check_timeout_s: float = 120.0
    # annotations written per check run (the rest are counted in its summary), and
    # `vendor: <DEV>` labels one pull request may get
    max_annotations: int = 100
    max_vendor_labels: int = 10
    # /healthz calls a queue stuck when deliveries wait and no worker has taken one, nor seen
    # it empty, for this long (bot/monitoring/health.py)
    stuck_after_s: float = 600.0
    # SQLite WAL checkpoints in a `Checkpointer` thread instead of inside commits
    # (FLAGBOT_SQLITE_CHECKPOINTS=background; serve and worker turn it on, store/sqlite_file.py)
    background_checkpoints: bool = False
    # prometheus_client's multi-process folder (PROMETHEUS_MULTIPROC_DIR): /metrics sums the
    # counters of every serve process found there (bot/monitoring/metrics.py)
    metrics_dir: Path | None = None
    # `text`, or `json` for one object per line (FLAGBOT_LOG_FORMAT; --log-format sets it for
    # serve's gunicorn child too)
    log_format: str = "text"
    # the "not configured" start-up warnings were already printed by `flagbot serve`, so its
    # gunicorn workers stay quiet (one set of lines per start, not one per process)
    startup_warned: bool = False
    # `runner: local` without bubblewrap: runs pull-request code beside the bot's secrets
    # (FLAGBOT_UNSAFE_LOCAL_RUNNER=1; for machines that only ever see trusted code)
    unsafe_local_runner: bool = False
    # slash-command comments answered per 10 minutes: per commenter and per pull request,
    # and from people without write access per repository (bot/handlers/issue_comment.py)
    commands_per_user: int = 5
    commands_per_pull: int = 10
    outsider_commands_per_repo: int = 20
    # Delivery-log reconciliation (bot/chores/reconcile.py): a round at the worker's start and every
    # `reconcile_minutes` (0: never), asking GitHub for at most `reconcile_max` redeliveries each
    reconcile_minutes: float = 10.0
    reconcile_max: int = 50
    # GET /dashboard: open to requests bearing this token (FLAGBOT_DASHBOARD_TOKEN), or to
    # everyone with FLAGBOT_DASHBOARD_PUBLIC=1; off when neither is set
    dashboard_token: str | None = field(default=None, repr=False)
    dashboard_public: bool = False

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        key = env.get("GITHUB_PRIVATE_KEY")
        key_path = env.get("GITHUB_PRIVATE_KEY_PATH")
        if not key and key_path:
            key = Path(key_path).read_text(encoding="utf-8")
        return cls(
            app_id=env.get("GITHUB_APP_ID") or None,
            private_key=key or None,
            webhook_secret=env.get("GITHUB_WEBHOOK_SECRET") or None,
            webhook_secret_previous=env.get("GITHUB_WEBHOOK_SECRET_PREVIOUS") or None,
            api_url=(env.get("GITHUB_API_URL") or PUBLIC_API_URL).rstrip("/"),
            state_dir=Path(env.get("FLAGBOT_STATE_DIR") or ".flagbot"),
            redis_url=env.get("FLAGBOT_REDIS_URL") or None,
            port=int(env.get("PORT") or 8000),
            write_spacing_s=float(env.get("FLAGBOT_WRITE_SPACING_S") or 1.0),
            write_burst=int(env.get("FLAGBOT_WRITE_BURST") or 10),
            request_header_timeout_s=float(env.get("FLAGBOT_REQUEST_HEADER_TIMEOUT_S") or 5.0),
            request_timeout_s=float(env.get("FLAGBOT_REQUEST_TIMEOUT_S") or 10.0),
            max_pending_connections=int(env.get("FLAGBOT_MAX_PENDING_CONNECTIONS") or 256),
            max_pending_bytes=int(env.get("FLAGBOT_MAX_PENDING_BYTES") or 64 * 1024 * 1024),
            check_memory_mb=int(env.get("FLAGBOT_CHECK_MEMORY_MB") or 1024),
            check_timeout_s=float(env.get("FLAGBOT_CHECK_TIMEOUT_S") or 120.0),
            max_annotations=int(env.get("FLAGBOT_MAX_ANNOTATIONS") or 100),
            max_vendor_labels=int(env.get("FLAGBOT_MAX_VENDOR_LABELS") or 10),
            stuck_after_s=float(env.get("FLAGBOT_STUCK_AFTER_S") or 600.0),
            background_checkpoints=env.get(CHECKPOINTS_ENV) == "background",
            metrics_dir=Path(env[METRICS_ENV]) if env.get(METRICS_ENV) else None,
            log_format=env.get(LOG_FORMAT_ENV) or "text",
            startup_warned=env.get(STARTUP_WARNED_ENV) == "1",
            unsafe_local_runner=env.get("FLAGBOT_UNSAFE_LOCAL_RUNNER") == "1",
            commands_per_user=int(env.get("FLAGBOT_COMMANDS_PER_USER") or 5),
            commands_per_pull=int(env.get("FLAGBOT_COMMANDS_PER_PULL") or 10),
            outsider_commands_per_repo=int(env.get("FLAGBOT_OUTSIDER_COMMANDS_PER_REPO") or 20),
            reconcile_minutes=float(env.get("FLAGBOT_RECONCILE_MINUTES") or 10.0),
            reconcile_max=int(env.get("FLAGBOT_RECONCILE_MAX") or 50),
            dashboard_token=env.get("FLAGBOT_DASHBOARD_TOKEN") or None,
            dashboard_public=env.get("FLAGBOT_DASHBOARD_PUBLIC") == "1",
        )

    @property
    def ledger_path(self) -> Path:
        """The SQLite ledger (without FLAGBOT_REDIS_URL)."""
        return self.state_dir / "ledger.db"

    @property
    def feed_path(self) -> Path:
        """The SQLite label log behind the downstream feed (without FLAGBOT_REDIS_URL)."""
        return self.state_dir / "feed.db"

    @property
    def queue_path(self) -> Path:
        """The SQLite Huey queue (without FLAGBOT_REDIS_URL)."""
        return self.state_dir / "queue.db"

    def with_overrides(self, **changes: object) -> Settings:
        """A copy with `changes` applied."""
        return replace(self, **changes)  # type: ignore[arg-type]

    def child_environ(self, base: Mapping[str, str]) -> dict[str, str]:
        """`base` plus the variables that give a child process (gunicorn) these settings'
        state dir, checkpoint mode, metrics folder, log format and warnings already given."""
        env = dict(base, FLAGBOT_STATE_DIR=str(self.state_dir))
        if self.background_checkpoints:
            env[CHECKPOINTS_ENV] = "background"
        if self.metrics_dir is not None:
            env[METRICS_ENV] = str(self.metrics_dir)
        if self.log_format != "text":
            env[LOG_FORMAT_ENV] = self.log_format
        if self.startup_warned:
            env[STARTUP_WARNED_ENV] = "1"
        return env


def private_state(state_dir: Path) -> None:
    """Files this process (and its children: gunicorn, git) creates are its user's alone
    (umask 077: folders 0700, files 0600): the state dir holds payloads, clones of private
    repositories and tokens' traces. A new state dir is made 0700."""
    os.umask(0o077)
    state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
