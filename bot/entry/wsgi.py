"""The WSGI entry point for gunicorn: `gunicorn flagbot.bot.entry.wsgi:app` (what `flagbot serve` runs).

`app` is built on first access (module `__getattr__`) from the environment's settings, so
importing this module reads nothing.
"""

from __future__ import annotations

import logging

from flask import Flask

from flagbot.bot.entry.web import create_app
from flagbot.bot.monitoring import logs
from flagbot.bot.settings import Settings

_app: Flask | None = None


def __getattr__(name: str) -> Flask:
    global _app
    if name != "app":
        raise AttributeError(name)
    if _app is None:
        settings = Settings.from_env()
        if not logging.getLogger().handlers:
            logs.setup("info", settings.log_format, (settings.webhook_secret,
                       settings.webhook_secret_previous, settings.private_key))
        _app = create_app(settings)
    return _app
