"""Server settings: the only place that reads environment variables (DESIGN.md "Server configuration")."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

PUBLIC_API_URL = "https://api.github.com"


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
    # the worker inside `flagbot serve` (SQLite mode); tests turn it off to drive it themselves
    run_worker_in_process: bool = True
    worker_threads: int = 2
    # writes to GitHub per installation: `write_burst` at once, then one per `write_spacing_s`
    # (GitHub's guidance: about a second between content-creating requests; bot/pacing.py)
    write_spacing_s: float = 1.0
    write_burst: int = 10
    max_body_bytes: int = 25 * 1024 * 1024

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
        )

    @property
    def ledger_path(self) -> Path:
        """The SQLite ledger (without FLAGBOT_REDIS_URL)."""
        return self.state_dir / "ledger.db"

    @property
    def queue_path(self) -> Path:
        """The SQLite Huey queue (without FLAGBOT_REDIS_URL)."""
        return self.state_dir / "queue.db"

    def with_overrides(self, **changes: object) -> Settings:
        return replace(self, **changes)  # type: ignore[arg-type]
