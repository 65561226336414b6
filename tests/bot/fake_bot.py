"""`python -m tests.bot.fake_bot serve|worker ARGS`: the real commands, with `FakeHandlers`.

serve's gunicorn child serves `make_app()` below, the app with the fake handlers' filter; its
in-process worker, like `worker`'s, runs `FakeHandlers`. Like the real commands, nothing that
loads prometheus_client is imported before serve has set up its metrics folder.
"""

from __future__ import annotations

import sys
from typing import Any

from flagbot.bot.entry import cli
from flagbot.bot.settings import Settings
from flagbot.hooks.errors import UsageError
from tests.bot.core_support import FakeHandlers

APP = "tests.bot.fake_bot:make_app()"


def make_app() -> Any:
    """What gunicorn serves: settings from the environment, the fake handlers' filter."""
    from flagbot.bot.entry.web import create_app

    return create_app(Settings.from_env())


def main(argv: list[str]) -> int:
    command, args = argv[0], argv[1:]
    try:
        if command == "serve":
            return cli.serve(cli.serve_parser().parse_args(args), handlers=FakeHandlers, app=APP)
        return cli.work(cli.worker_parser().parse_args(args), handlers=FakeHandlers)
    except UsageError as exc:
        print(f"flagbot: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
