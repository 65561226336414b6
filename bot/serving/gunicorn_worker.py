"""`flagbot serve`'s gunicorn worker class: a kept-alive connection stays with its thread.

gunicorn's `gthread` worker hands every kept-alive connection back to its main loop after each
request (a pipe write, a poller registration, a thread-pool submission) and sends the status
line with headers and the body in separate system calls; in a profile on a 2-core host those
two took ~45 % of a worker's busy time (~26 % and ~20 %). Here a thread serves one
connection's requests one after another, and a response leaves in one write.

Threads are `--threads`; accepted connections wait for a free thread. A thread gives its
connection up when it has been idle for the keep-alive timeout, as soon as it is idle while
other connections wait for a thread, and after the current response when the worker stops.
Built on gunicorn's public worker pieces (`base.Worker`, the HTTP/1 parser, `wsgi.create`),
as its `sync` worker is; HTTP/2 is not offered (GitHub delivers webhooks over HTTP/1.1).
"""

from __future__ import annotations

import errno
import os
import select
import socket
import ssl
import sys
import threading
import time
from collections import deque
from datetime import datetime
from typing import Any

from gunicorn import http, util
from gunicorn import sock as gsock
from gunicorn.http import wsgi
from gunicorn.workers import base

from flagbot.bot.serving.heap import settle_heap

FIRST_REQUEST_WAIT_S = 5.0  # a new connection's first request (gthread waits as long)
IDLE_SLICE_S = 0.02  # how often an idle held connection looks for connections waiting
FLUSH_AT = 64 * 1024  # a streamed response leaves in pieces of about this size


class CoalescingSocket:
    """The socket a Response writes to: its pieces go out in one `sendall` at `flush`."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._parts: list[bytes] = []
        self._size = 0
        self.wrote = False  # whether any of this response reached the socket

    def start(self) -> None:
        """A new response begins."""
        self._parts.clear()
        self._size = 0
        self.wrote = False

    def sendall(self, data: bytes) -> None:
        self._parts.append(bytes(data))
        self._size += len(data)
        if self._size >= FLUSH_AT:
            self.flush()

    def send(self, data: bytes) -> int:
        self.flush()
        return self._sock.send(data)

    def sendfile(self, file: Any, offset: int = 0, count: int | None = None) -> int:
        self.flush()
        return self._sock.sendfile(file, offset, count)

    def flush(self) -> None:
        if self._parts:
            data = b"".join(self._parts) if len(self._parts) > 1 else self._parts[0]
            self._parts.clear()
            self._size = 0
            self.wrote = True
            self._sock.sendall(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


class Connection:
    """One accepted client socket and its HTTP/1 parser."""

    def __init__(self, client: socket.socket, addr: Any, server: Any) -> None:
        self.sock = client
        self.addr = addr
        self.server = server
        self.parser: Any = None

    def buffered(self) -> bool:
        """Whether bytes of a next request are already read (pipelining) or decrypted (TLS),
        where waiting for the socket to become readable would not see them."""
        if self.parser is not None and self.parser.unreader.buf.getvalue():
            return True
        pending = getattr(self.sock, "pending", None)  # ssl.SSLSocket only
        return bool(pending is not None and pending())


class KeepAliveWorker(base.Worker):  # type: ignore[misc]
    """gunicorn worker: `threads` threads, each serving one connection at a time."""

    alive: bool  # base.Worker's flag: False once the worker should stop

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.waiting: deque[Connection] = deque()
        self.ready = threading.Condition()
        self.nr_lock = threading.Lock()

    # main thread: accept, heartbeat, stop

    def run(self) -> None:
        settle_heap()  # the app is loaded now
        for listener in self.sockets:
            listener.setblocking(False)
        names = {listener: listener.getsockname() for listener in self.sockets}
        threads = [threading.Thread(target=self.serve_connections, daemon=True,
                                    name=f"flagbot-http-{n}") for n in range(self.cfg.threads)]
        for thread in threads:
            thread.start()
        while self.alive:
            self.notify()
            full = len(self.waiting) >= self.cfg.worker_connections
            watch = [self.PIPE[0]] if full else [self.PIPE[0], *self.sockets]
            try:
                ready, _, _ = select.select(watch, [], [], 0.05 if full else 1.0)
            except OSError as exc:
                if exc.errno != errno.EINTR:
                    raise
                ready = []
            for fd in ready:
                if fd is self.PIPE[0]:
                    os.read(self.PIPE[0], 4096)
                else:
                    self.accept_all(fd, names[fd])
            if self.ppid != os.getppid():
                self.log.info("Parent changed, shutting down: %s", self)
                self.alive = False
        for listener in self.sockets:
            listener.close()
        with self.ready:
            self.ready.notify_all()
        deadline = time.monotonic() + self.cfg.graceful_timeout
        for thread in threads:
            while thread.is_alive() and time.monotonic() < deadline:
                self.notify()
                thread.join(min(1.0, max(deadline - time.monotonic(), 0.0)))

    def accept_all(self, listener: socket.socket, server: Any) -> None:
        """Accept every connection the listener has, up to `worker_connections` waiting."""
        while len(self.waiting) < self.cfg.worker_connections:
            try:
                client, addr = listener.accept()
            except OSError as exc:
                if exc.errno in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                    return
                raise
            client.setblocking(True)
            util.close_on_exec(client)
            with self.ready:
                self.waiting.append(Connection(client, addr, server))
                self.ready.notify()

    # serving threads

    def serve_connections(self) -> None:
        """Take waiting connections until the worker stops and none are left."""
        while True:
            with self.ready:
                while not self.waiting and self.alive:
                    self.ready.wait(1.0)
                if not self.waiting:
                    return
                conn = self.waiting.popleft()
            self.serve(conn)

    def wait_for_request(self, conn: Connection, first: bool) -> bool:
        """Wait until the connection has a request to read; False: give the connection up."""
        if conn.buffered():
            return True
        deadline = time.monotonic() + (FIRST_REQUEST_WAIT_S if first else self.cfg.keepalive)
        while True:
            if not first and (self.waiting or not self.alive):
                return False  # idle, and a waiting connection or the stop wants this thread
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            readable, _, _ = select.select([conn.sock], [], [], min(left, IDLE_SLICE_S))
            if readable:
                return True

    def serve(self, conn: Connection) -> None:
        """Serve one connection's requests in a row; close it when done."""
        req = None
        graceful = False
        try:
            if self.cfg.is_ssl:
                conn.sock = gsock.ssl_wrap_socket(conn.sock, self.cfg)
            conn.parser = http.get_parser(self.cfg, conn.sock, conn.addr)
            out = CoalescingSocket(conn.sock)
            first = True
            while self.wait_for_request(conn, first):
                first = False
                req = next(conn.parser)
                if not req:
                    break
                keep = self.handle_request(req, conn, out)
                req = None
                if not keep:
                    graceful = True  # the client was told "Connection: close"
                    break
        except http.errors.NoMoreData as exc:
            self.log.debug("Ignored premature client disconnection. %s", exc)
        except StopIteration as exc:
            self.log.debug("Closing connection. %s", exc)
        except ssl.SSLError as exc:
            if exc.args[0] != ssl.SSL_ERROR_EOF:
                self.log.debug("Error processing SSL request.")
                self.handle_error(req, conn.sock, conn.addr, exc)
        except OSError as exc:
            if exc.errno not in (errno.EPIPE, errno.ECONNRESET, errno.ENOTCONN):
                self.log.exception("Socket error processing request.")
            else:
                self.log.debug("Ignoring connection error %s", exc)
        except Exception as exc:
            self.handle_error(req, conn.sock, conn.addr, exc)
        finally:
            if graceful:
                util.close_graceful(conn.sock)
            else:
                util.close(conn.sock)

    def handle_request(self, req: Any, conn: Connection, out: CoalescingSocket) -> bool:
        """Run the app for one request; True when the connection stays open for the next."""
        environ: dict[str, Any] = {}
        resp = None
        try:
            self.cfg.pre_request(self, req)
            request_start = datetime.now()
            out.start()
            resp, environ = wsgi.create(req, out, conn.addr, conn.server, self.cfg)
            environ["wsgi.multithread"] = True
            with self.nr_lock:
                self.nr += 1
                if self.nr >= self.max_requests and self.alive:
                    self.log.info("Autorestarting worker after current request.")
                    self.alive = False
            respiter = self.wsgi(environ, resp.start_response)
            # decided once the app has run, before the headers are written: a connection that
            # came in meanwhile gets this thread next, and this client is told so
            if not self.alive or not self.cfg.keepalive or self.waiting:
                resp.force_close()
            try:
                if isinstance(respiter, environ["wsgi.file_wrapper"]):
                    resp.write_file(respiter)
                else:
                    for item in respiter:
                        resp.write(item)
                resp.close()
                out.flush()
            finally:
                self.log.access(resp, req, environ, datetime.now() - request_start)
                if hasattr(respiter, "close"):
                    respiter.close()
            return not resp.should_close()
        except OSError:
            util.reraise(*sys.exc_info())
        except (Exception, SystemExit):
            if resp is not None and resp.headers_sent:
                if out.wrote:  # part of the response is on the wire: a 500 would corrupt it
                    self.log.exception("Error handling request")
                    raise StopIteration() from None
                out.start()  # nothing sent yet: drop it, the client gets a clean 500
            raise
        finally:
            try:
                self.cfg.post_request(self, req, environ, resp)
            except Exception:
                self.log.exception("Exception in post_request hook")
        return False  # not reached: every path above returns or raises
