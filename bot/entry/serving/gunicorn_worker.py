"""`flagbot serve`'s gunicorn worker class: a kept-alive connection stays with its thread.

gunicorn's `gthread` worker hands every kept-alive connection back to its main loop after each
request (a pipe write, a poller registration, a thread-pool submission) and sends the status
line with headers and the body in separate system calls; in a profile on a 2-core host those
two took ~45 % of a worker's busy time (~26 % and ~20 %). Here a thread serves one
connection's requests one after another, and a response leaves in one write.

Threads are `--threads`. A thread gets a connection only once its request has arrived in full
(`serving/reception.py` gathers arriving requests in the main loop, so slow clients hold no
thread); connections with a complete request wait for a free thread. A thread gives its
connection up when it has been idle for the keep-alive timeout, as soon as it is idle while
other connections wait for a thread, and after the current response when the worker stops; a
next request that does not arrive in one piece goes back to the reception. Every blocking read
or write on a served connection is bounded by the request timeout. (Over TLS, which is best
ended in a proxy in front, the thread reads the request itself, within those timeouts.)
Built on gunicorn's public worker pieces (`base.Worker`, the HTTP/1 parser, `wsgi.create`),
as its `sync` worker is; HTTP/2 is not offered (GitHub delivers webhooks over HTTP/1.1).
"""

from __future__ import annotations

import errno
import os
import select
import selectors
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

from flagbot.bot.entry.serving.heap import settle_heap
from flagbot.bot.entry.serving.reception import (
    HEAD_TOO_LARGE,
    HEAD_TOO_LARGE_REPLY,
    PARTIAL,
    STREAMED,
    TIMEOUT_REPLY,
    Limits,
    Reception,
    read_ready,
    refuse,
    request_state,
)
from flagbot.bot.settings import Settings

FIRST_REQUEST_WAIT_S = 5.0  # a new TLS connection's first request (gthread waits as long)
DRAIN_S = 1.0  # an unread rest of a request body is discarded within this, else the connection closes
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
        self.buf = bytearray()  # bytes of the next request(s) not yet given to the parser
        self.streamed = False  # handed over before its body arrived: closed after the response

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
        self.limits = Limits.from_settings(Settings.from_env())
        self.reception = Reception(self.limits)
        self.returned: deque[Connection] = deque()  # threads hand partial requests back here
        selector = selectors.DefaultSelector()
        selector.register(self.PIPE[0], selectors.EVENT_READ, None)
        for listener in self.sockets:
            listener.setblocking(False)
        names = {listener: listener.getsockname() for listener in self.sockets}
        threads = [threading.Thread(target=self.serve_connections, daemon=True,
                                    name=f"flagbot-http-{n}") for n in range(self.cfg.threads)]
        for thread in threads:
            thread.start()
        accepting = False
        while self.alive:
            self.notify()
            self.adopt_returned(selector)
            full = len(self.waiting) >= self.cfg.worker_connections
            if accepting == full:  # stop watching the listeners while too many wait for threads
                for listener in self.sockets:
                    if full:
                        selector.unregister(listener)
                    else:
                        selector.register(listener, selectors.EVENT_READ, names[listener])
                accepting = not full
            wait = 0.05 if full else 1.0
            deadline = self.reception.next_deadline()
            if deadline is not None:
                wait = min(wait, max(deadline - time.monotonic(), 0.0) + 0.01)
            try:
                events = selector.select(wait)
            except OSError as exc:
                if exc.errno != errno.EINTR:
                    raise
                events = []
            for key, _ in events:
                if key.fileobj == self.PIPE[0]:
                    try:
                        os.read(self.PIPE[0], 4096)
                    except BlockingIOError:
                        pass
                elif key.data is None:
                    self.receive(selector, key.fd)
                else:
                    self.accept_all(selector, key.fileobj, key.data)  # type: ignore[arg-type]
            self.expire(selector)
            if self.ppid != os.getppid():
                self.log.info("Parent changed, shutting down: %s", self)
                self.alive = False
        for listener in self.sockets:
            listener.close()
        for arrival in list(self.reception.arrivals.values()):
            self.reception.drop(arrival)
            util.close(arrival.conn.sock)
        with self.ready:
            self.ready.notify_all()
        deadline = time.monotonic() + self.cfg.graceful_timeout
        for thread in threads:
            while thread.is_alive() and time.monotonic() < deadline:
                self.notify()
                thread.join(min(1.0, max(deadline - time.monotonic(), 0.0)))

    def accept_all(self, selector: selectors.BaseSelector, listener: socket.socket,
                   server: Any) -> None:
        """Accept every connection the listener has; each request starts in the reception."""
        while len(self.waiting) < self.cfg.worker_connections:
            try:
                client, addr = listener.accept()
            except OSError as exc:
                if exc.errno in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                    return
                raise
            util.close_on_exec(client)
            conn = Connection(client, addr, server)
            if self.cfg.is_ssl:  # the TLS handshake and the request are read by the thread
                client.settimeout(self.limits.request_timeout_s)
                self.hand_over(conn)
                continue
            client.setblocking(False)
            self.start_arrival(selector, conn)

    def start_arrival(self, selector: selectors.BaseSelector, conn: Connection) -> None:
        """Gather `conn`'s next request in the reception (oldest arrivals closed for room)."""
        buf, conn.buf = conn.buf, bytearray()
        for evicted in self.reception.add(conn, buf, time.monotonic()):
            self.log.debug("closed a slow connection from %s to make room", evicted.conn.addr)
            self.unwatch(selector, evicted.conn)
        selector.register(conn.sock, selectors.EVENT_READ, None)

    def unwatch(self, selector: selectors.BaseSelector, conn: Connection) -> None:
        try:
            selector.unregister(conn.sock)
        except (KeyError, ValueError):
            pass

    def receive(self, selector: selectors.BaseSelector, fd: int) -> None:
        """Read what arrived for a request; a complete one goes to the threads."""
        if fd not in self.reception.arrivals:
            return
        arrival, state, evicted = self.reception.receive(fd)
        for other in evicted:
            self.unwatch(selector, other.conn)
        if state == PARTIAL:
            return
        self.reception.drop(arrival)
        self.unwatch(selector, arrival.conn)
        conn = arrival.conn
        if state is None:  # the client went away
            util.close(conn.sock)
        elif state == HEAD_TOO_LARGE:
            refuse(conn.sock, HEAD_TOO_LARGE_REPLY)
        else:
            conn.buf, conn.streamed = arrival.buf, state == STREAMED
            conn.sock.settimeout(self.limits.request_timeout_s)
            self.hand_over(conn)

    def expire(self, selector: selectors.BaseSelector) -> None:
        """Close, with a 408, the arrivals that missed a deadline."""
        for arrival in self.reception.expired(time.monotonic()):
            self.reception.drop(arrival)
            self.unwatch(selector, arrival.conn)
            refuse(arrival.conn.sock, TIMEOUT_REPLY)

    def hand_over(self, conn: Connection) -> None:
        """Queue `conn` (its request complete) for a serving thread."""
        with self.ready:
            self.waiting.append(conn)
            self.ready.notify()

    def adopt_returned(self, selector: selectors.BaseSelector) -> None:
        """Take back the connections whose next request a thread found incomplete."""
        while self.returned:
            conn = self.returned.popleft()
            try:
                conn.sock.setblocking(False)
            except OSError:
                util.close(conn.sock)
                continue
            self.start_arrival(selector, conn)

    def give_back(self, conn: Connection) -> None:
        """From a thread: let the reception gather the rest of `conn`'s next request."""
        self.returned.append(conn)
        try:
            os.write(self.PIPE[1], b".")
        except OSError:
            pass  # the pipe is full: the main loop is awake anyway

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

    def next_request(self, conn: Connection, first: bool) -> Any:
        """The connection's next request, once all of it has arrived; None: close the
        connection; False: it went back to the reception to arrive in full."""
        if self.cfg.is_ssl:  # read by the parser itself, within the socket's timeout
            if not self.wait_for_request(conn, first):
                return None
            return next(conn.parser)
        conn.buf += conn.parser.unreader.take_buffered()  # pipelined bytes read with the last one
        state = request_state(conn.buf, self.limits.max_body_bytes) if conn.buf else PARTIAL
        if state == PARTIAL:
            if not conn.buf and not self.wait_for_request(conn, first):
                return None
            conn.sock.setblocking(False)
            try:
                alive = read_ready(conn.sock, conn.buf, self.limits.max_body_bytes)
            finally:
                conn.sock.settimeout(self.limits.request_timeout_s)
            if not alive:
                return None
            state = request_state(conn.buf, self.limits.max_body_bytes)
            if state == PARTIAL:
                self.give_back(conn)
                return False
        if state == HEAD_TOO_LARGE:
            conn.sock.sendall(HEAD_TOO_LARGE_REPLY)
            return None
        conn.streamed = conn.streamed or state == STREAMED
        conn.parser.unreader.unread(bytes(conn.buf))
        conn.buf.clear()
        return next(conn.parser)

    def serve(self, conn: Connection) -> None:
        """Serve one connection's requests in a row; close it when done."""
        req = None
        graceful = False
        kept = False  # handed back to the reception, not closed
        try:
            first = conn.parser is None
            if first:
                if self.cfg.is_ssl:
                    conn.sock = gsock.ssl_wrap_socket(conn.sock, self.cfg)
                conn.parser = http.get_parser(self.cfg, conn.sock, conn.addr)
            out = CoalescingSocket(conn.sock)
            while True:
                req = self.next_request(conn, first)
                first = False
                if req is False:
                    kept = True
                    break
                if not req:
                    break
                keep = self.handle_request(req, conn, out)
                req = None
                if not keep or conn.streamed:  # streamed: where a next request starts is unknown
                    graceful = True  # the client was told "Connection: close"
                    break
                if not conn.parser.finish_body(deadline=time.monotonic() + DRAIN_S):
                    break
        except http.errors.NoMoreData as exc:
            self.log.debug("Ignored premature client disconnection. %s", exc)
        except StopIteration as exc:
            self.log.debug("Closing connection. %s", exc)
        except ssl.SSLError as exc:
            if exc.args[0] != ssl.SSL_ERROR_EOF:
                self.log.debug("Error processing SSL request.")
                self.handle_error(req, conn.sock, conn.addr, exc)
        except TimeoutError:
            self.log.debug("Closing a connection that stalled past the request timeout")
        except OSError as exc:
            if exc.errno not in (errno.EPIPE, errno.ECONNRESET, errno.ENOTCONN):
                self.log.exception("Socket error processing request.")
            else:
                self.log.debug("Ignoring connection error %s", exc)
        except Exception as exc:
            self.handle_error(req, conn.sock, conn.addr, exc)
        finally:
            if kept:
                pass
            elif graceful:
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
            if not self.alive or not self.cfg.keepalive or self.waiting or conn.streamed:
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
