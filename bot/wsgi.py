"""The WSGI entry point for gunicorn: `gunicorn flagbot.bot.wsgi:app` (what `flagbot serve` runs).

`app` is built on first access (module `__getattr__`) from the environment's settings, so
importing this module reads nothing.
"""

from __future__ import annotations

import logging

from flask import Flask

from flagbot.bot.app import create_app
from flagbot.bot.settings import Settings

_app: Flask | None = None


def __getattr__(name: str) -> Flask:
    global _app
    if name != "app":
        raise AttributeError(name)
    if _app is None:
        if not logging.getLogger().handlers:
            logging.basicConfig(level=logging.INFO,
                                format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        _app = create_app(Settings.from_env())
    return _app
