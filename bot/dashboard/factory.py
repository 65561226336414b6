"""Which dashboard store the settings pick: Redis when `FLAGBOT_REDIS_URL` is set, else SQLite."""

from __future__ import annotations

from flagbot.bot.dashboard.store import DashStore
from flagbot.bot.settings import Settings


def open_store(settings: Settings) -> DashStore:
    """The dashboard store for these settings."""
    if settings.redis_url:
        from flagbot.bot.dashboard.store_redis import RedisDashStore

        return RedisDashStore(settings.redis_url)
    from flagbot.bot.dashboard.store_sqlite import SqliteDashStore

    return SqliteDashStore(settings.state_dir / "dashboard.db")
