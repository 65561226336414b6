"""Which store the settings pick: Redis when `FLAGBOT_REDIS_URL` is set, else SQLite files."""

from __future__ import annotations

from collections.abc import Callable

from flagbot.bot.feed.log import LabelLog
from flagbot.bot.settings import Settings
from flagbot.bot.store import Ledger
from flagbot.bot.store.queue import QUEUE_NAME, DeliveryQueue
from flagbot.bot.store.rates import Rates


def open_ledger(settings: Settings) -> Ledger:
    """The ledger for these settings."""
    if settings.redis_url:
        from flagbot.bot.store.redis import RedisLedger  # redis-py only where it is used

        return RedisLedger(settings.redis_url)
    from flagbot.bot.store.sqlite import SqliteLedger

    return SqliteLedger(settings.ledger_path,
                        background_checkpoints=settings.background_checkpoints)


def open_queue(settings: Settings, process: Callable[[str], None] | None = None) -> DeliveryQueue:
    """The queue for these settings; `process` runs a delivery id (the worker's side)."""
    if settings.redis_url:
        from flagbot.bot.store.redis import queue_huey as redis_huey

        return DeliveryQueue(redis_huey(QUEUE_NAME, settings.redis_url), process)
    from flagbot.bot.store.sqlite import queue_huey

    huey = queue_huey(QUEUE_NAME, settings.queue_path,
                      background_checkpoints=settings.background_checkpoints)
    return DeliveryQueue(huey, process)


def open_label_log(settings: Settings, *, create: bool = True) -> LabelLog:
    """The label log behind the downstream feed; `create=False` leaves a missing SQLite file
    alone (read as empty) for readers such as `flagbot labeled`."""
    if settings.redis_url:
        from flagbot.bot.feed.log_redis import RedisLabelLog

        return RedisLabelLog(settings.redis_url)
    from flagbot.bot.feed.log_sqlite import SqliteLabelLog

    return SqliteLabelLog(settings.feed_path, create=create)


def open_rates(settings: Settings) -> Rates:
    """The rate-limit counters of slash commands."""
    if settings.redis_url:
        from flagbot.bot.store.rates import RedisRates

        return RedisRates(settings.redis_url)
    from flagbot.bot.store.rates import SqliteRates

    return SqliteRates(settings.state_dir / "rates.db")
