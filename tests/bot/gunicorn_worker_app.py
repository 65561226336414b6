"""A small WSGI app for tests/bot/test_gunicorn_worker.py, served by real gunicorn with
`flagbot.bot.entry.serving.gunicorn_worker.KeepAliveWorker`. Paths pick the behaviour."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import Any


def app(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
    path = environ["PATH_INFO"]
    if path == "/boom":
        raise RuntimeError("before any byte of the response")
    if path == "/half":
        start_response("200 OK", [("Content-Type", "text/plain")])  # no length: streamed
        return half_then_fail()
    if path.startswith("/sleep/"):
        time.sleep(float(path.rsplit("/", 1)[1]))
    body = environ["wsgi.input"].read()
    reply = f"{path} port={environ['REMOTE_PORT']} body={len(body)}".encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(reply)))])
    return [reply]


def half_then_fail() -> Iterator[bytes]:
    yield b"x" * (128 * 1024)  # over the flush size: this part is on the wire
    raise RuntimeError("in the middle of the body")
