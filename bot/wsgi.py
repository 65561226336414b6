"""The WSGI entry point for gunicorn: `gunicorn flagbot.bot.wsgi:app` (what `flagbot serve` runs).

`app` is built on first access (module `__getattr__`), so importing this module reads nothing;
`build(handlers="pkg.module")` lets an operator or a test plug another handlers module in.
"""

from __future__ import annotations

import logging

from flask import Flask

from flagbot.bot.app import create_app
from flagbot.bot.settings import Settings
from flagbot.bot.worker import DEFAULT_HANDLERS, load_handlers

_app: Flask | None = None


def build(handlers: str = DEFAULT_HANDLERS) -> Flask:
    """The app with settings from the environment and `handlers`' `wants`."""
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO,
                            format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    wants, _ = load_handlers(handlers)
    return create_app(Settings.from_env(), wants=wants)


def __getattr__(name: str) -> Flask:
    global _app
    if name != "app":
        raise AttributeError(name)
    if _app is None:
        _app = build()
    return _app
