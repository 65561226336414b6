"""`WebhookFastPath`: `POST /webhook` answered without Flask's request/response machinery.

The hot path is one view; Flask's routing, contexts and Response objects cost about as much CPU
as the view itself, so /webhook has no Flask view at all: this middleware is its only route
(`ingest.ingest` answers POST; another method gets 405, as Flask would say). Everything else
(/healthz, /metrics, /feeds) goes to Flask.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from flask import Flask
from werkzeug.exceptions import InternalServerError, MethodNotAllowed
from werkzeug.http import HTTP_STATUS_CODES

from flagbot.bot.ingest import Answer

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

PATH = "/webhook"  # served here only, for POST (Flask has no view for it)


class WebhookFastPath:
    """WSGI middleware in front of `app`: `POST /webhook` goes to `handle`, the rest to `inner`."""

    def __init__(self, app: Flask, inner: WSGIApplication,
                 handle: Callable[[WSGIEnvironment], Answer]) -> None:
        self.app = app
        self.inner = inner
        self.handle = handle

    def __call__(self, environ: WSGIEnvironment,
                 start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("PATH_INFO") != PATH:
            return self.inner(environ, start_response)
        if environ.get("REQUEST_METHOD") != "POST":
            return MethodNotAllowed(valid_methods=["POST"])(environ, start_response)
        try:
            code, body = self.handle(environ)
        except Exception:
            # what Flask does with an unhandled exception in a view
            if self.app.config["PROPAGATE_EXCEPTIONS"] or self.app.testing:
                raise
            self.app.logger.error("Exception on /webhook [POST]", exc_info=True)
            return InternalServerError()(environ, start_response)
        data = json.dumps(body).encode()
        start_response(f"{code} {HTTP_STATUS_CODES[code].upper()}",
                       [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
        return [data]
