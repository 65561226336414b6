"""The HTTP side: request parsing, auth, fault injection, pagination, rate-limit headers, recording."""

from __future__ import annotations

import json
import re
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

from testing.github_emulator.state import Call, RepoState

if TYPE_CHECKING:
    from testing.github_emulator.emulator import Emulator

RATE_LIMIT = 5000
DOCS = "https://docs.github.com/rest"


class ApiError(Exception):
    """An error reply: status, message, optional `errors` list (422 validation details)."""

    def __init__(self, status: int, message: str, errors: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.errors = errors


def not_found(what: str = "Not Found") -> ApiError:
    """The 404 GitHub gives for a missing object or route."""
    return ApiError(404, what)


def invalid(message: str, resource: str, fld: str, code: str = "invalid") -> ApiError:
    """A 422 `Validation Failed` naming the resource, field and code like GitHub does."""
    return ApiError(422, message, [{"resource": resource, "field": fld, "code": code}])


@dataclass
class Reply:
    """A response: status, JSON body (None -> empty; bytes are sent as they are), extra headers."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Request:
    """A parsed request as handlers see it."""

    emu: Emulator
    method: str
    path: str  # percent-decoded
    raw_path: str
    query: dict[str, str]
    json: Any
    params: dict[str, str]  # route captures, percent-decoded
    auth: str

    @property
    def rs(self) -> RepoState:
        """The repository named by the route's owner/repo captures (404 when unknown)."""
        rs = self.emu.state.repo(f"{self.params['owner']}/{self.params['repo']}")
        if rs is None:
            raise not_found()
        return rs

    def body_dict(self) -> dict[str, Any]:
        """The JSON body as an object (422 otherwise; an empty body is `{}`)."""
        if self.json is None:
            return {}
        if not isinstance(self.json, dict):
            raise ApiError(400, "Problems parsing JSON")
        return self.json

    def paginate(self, items: list[Any], convert: Callable[[Any], Any] | None = None) -> Reply:
        """Page `items` by `per_page` (default 30, max 100) and `page`, with GitHub's Link header.

        `convert` turns an item into JSON for the returned page only (large lists stay cheap).
        """
        try:
            per_page = max(1, min(100, int(self.query.get("per_page", "30"))))
            page = max(1, int(self.query.get("page", "1")))
        except ValueError as exc:
            raise ApiError(400, "per_page and page must be integers") from exc
        last = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page : page * per_page]
        if convert is not None:
            chunk = [convert(item) for item in chunk]
        links = []
        rels = [("prev", page - 1), ("next", page + 1), ("last", last), ("first", 1)]
        for rel, num in rels:
            if (rel in ("prev", "first") and page > 1) or (rel in ("next", "last") and page < last):
                q = {**self.query, "per_page": str(per_page), "page": str(num)}
                links.append(f'<{self.emu.url}{self.raw_path}?{urlencode(q)}>; rel="{rel}"')
        return Reply(200, chunk, {"Link": ", ".join(links)} if links else {})


Handler = Callable[[Request], Reply]
# (emulator, method, raw path, decoded path, query, JSON body, body unparsable, credential) -> reply
Dispatch = Callable[["Emulator", str, str, str, dict[str, str], Any, bool, str], Reply]
Route = tuple[str, "re.Pattern[str]", str, Handler]  # method, path pattern, auth kind, handler


@dataclass
class Fault:
    """An injected reply for requests matching method + path regex, consumed `times` times."""

    method: str
    path: re.Pattern[str]
    status: int
    times: int
    headers: dict[str, str]
    body: Any


def default_fault_body(status: int, headers: dict[str, str]) -> dict[str, Any]:
    """The message GitHub sends with such a failure (PyGithub's retry logic reads it)."""
    lower = {k.lower(): v for k, v in headers.items()}
    if status in (403, 429) and lower.get("x-ratelimit-remaining") == "0":
        return {"message": "API rate limit exceeded for installation ID 1.", "documentation_url": DOCS}
    if status in (403, 429):
        return {"message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.", "documentation_url": DOCS}
    return {"message": "Server Error" if status >= 500 else "Injected error"}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: PyGithub reuses its connection
    disable_nagle_algorithm = True  # header and body go out in two writes; Nagle would add 40 ms
    server: EmuHTTPServer

    def setup(self) -> None:
        super().setup()
        self.server.track(self.connection, True)

    def finish(self) -> None:
        self.server.track(self.connection, False)
        super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        return  # quiet: tests read emu.calls instead

    def do_GET(self) -> None:
        self._serve()

    do_POST = do_PATCH = do_PUT = do_DELETE = do_GET

    def _serve(self) -> None:
        emu = self.server.emu
        received = time.time()
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        split = urlsplit(self.path)
        query = dict(parse_qsl(split.query, keep_blank_values=True))
        path = unquote(split.path)
        body: Any = None
        parse_error = False
        if self.headers.get("Content-Type", "").startswith("application/x-www-form-urlencoded"):
            body = dict(parse_qsl(raw.decode("utf-8", "replace"), keep_blank_values=True))
        elif raw.strip():
            try:
                body = json.loads(raw)
            except ValueError:
                parse_error = True
        auth = emu.auth.classify(self.headers.get("Authorization", ""))
        with emu.state.lock:
            reply = self.server.dispatch(emu, self.command, split.path, path, query, body, parse_error, auth)
            call = Call(self.command, path, query, body, reply.status, received, split.path, auth)
            emu.state.calls.append(call)
            headers = emu.rate.headers(reply.headers)
        self._send(reply, headers)

    def _send(self, reply: Reply, headers: dict[str, str]) -> None:
        raw = isinstance(reply.body, bytes)
        data = b"" if reply.body is None or reply.status == 204 else \
            reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/zip" if raw else "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-GitHub-Media-Type", "github.v3; format=json")
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)


class EmuHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server bound to 127.0.0.1 that knows its emulator."""

    daemon_threads = True
    allow_reuse_address = True
    # socketserver's default backlog of 5 drops SYNs under a burst of clients: a 1 s retransmit each.
    request_queue_size = 128

    def __init__(self, emu: Emulator, dispatch: Dispatch, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.emu = emu
        self.dispatch = dispatch
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()

    def track(self, conn: socket.socket, is_open: bool) -> None:
        """Remember live client connections, so `close_connections` can end keep-alive ones."""
        with self._open_lock:
            if is_open:
                self._open.add(conn)
            else:
                self._open.discard(conn)

    def close_connections(self) -> None:
        """Shut every live client connection (a stopped emulator must look down to pooled clients)."""
        with self._open_lock:
            conns, self._open = list(self._open), set()
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client hanging up mid-reply is normal for retried requests; anything else is a bug.
        exc = sys.exc_info()[1]
        if not isinstance(exc, (ConnectionError, TimeoutError)):
            traceback.print_exc()


def serve_in_thread(server: EmuHTTPServer) -> threading.Thread:
    """Start `server.serve_forever` in a daemon thread."""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    return thread


def error_body(err: ApiError) -> dict[str, Any]:
    """GitHub's error JSON for `err`."""
    message = "Validation Failed" if err.status == 422 and err.errors else err.message
    body: dict[str, Any] = {"message": message, "documentation_url": DOCS}
    if err.errors:
        body["errors"] = [{**e, "message": err.message} for e in err.errors]
    body["status"] = str(err.status)
    return body
