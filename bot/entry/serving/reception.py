"""Reception: requests are read in full before a serving thread takes them.

A thread that reads a request itself is held by a client as long as the client takes to send
it: a few connections trickling headers or a body (slow-loris) would hold every thread and no
delivery would be answered. Here the worker's main loop gathers the bytes of arriving requests
from non-blocking sockets, many at once, and gives a connection to a thread only when its
request is complete (or cannot become a valid one: the app or gunicorn's parser answers it).

Bounds, from the settings: the headers within `request_header_timeout_s`, the whole request
within `request_timeout_s` of its first byte (408 and closed otherwise); at most
`max_pending_connections` arriving at once holding at most `max_pending_bytes`, the oldest
closed to make room, so newcomers (GitHub's deliveries among them) always get in; a head over
`MAX_HEAD_BYTES` gets 431. A body longer than the app accepts is not waited for: the app
answers 413 without reading it and the connection closes.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from flagbot.bot.settings import Settings

MAX_HEAD_BYTES = 64 * 1024  # request line and headers; GitHub sends about 1 KB
READ_SIZE = 64 * 1024
TIMEOUT_REPLY = b"HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
HEAD_TOO_LARGE_REPLY = (b"HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n"
                        b"Content-Length: 0\r\n\r\n")


@dataclass(frozen=True)
class Limits:
    """The bounds on arriving requests (see the module docstring)."""

    header_timeout_s: float = 5.0
    request_timeout_s: float = 10.0
    max_pending: int = 256
    max_pending_bytes: int = 64 * 1024 * 1024
    max_body_bytes: int = 25 * 1024 * 1024

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        return cls(settings.request_header_timeout_s, settings.request_timeout_s,
                   settings.max_pending_connections, settings.max_pending_bytes,
                   settings.max_body_bytes)


# What the bytes so far of a request allow: wait for more, hand it to a thread, or refuse it.
PARTIAL, READY, STREAMED, HEAD_TOO_LARGE = "partial", "ready", "streamed", "head-too-large"


def request_state(buf: bytes | bytearray, max_body: int) -> str:
    """PARTIAL (more bytes to come), READY (the whole request is in `buf`, or it is malformed
    and the parser will answer it), STREAMED (the headers are in; the body is over `max_body`,
    so the app refuses it unread) or HEAD_TOO_LARGE.

    Only the first request in `buf` counts; pipelined ones behind it wait their turn. A chunked
    body is complete at its last chunk (`0` and an empty line; trailers are not expected).
    """
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return HEAD_TOO_LARGE if len(buf) > MAX_HEAD_BYTES else PARTIAL
    if end > MAX_HEAD_BYTES:
        return HEAD_TOO_LARGE
    body = len(buf) - end - 4
    length: int | None = None
    chunked = False
    for line in bytes(buf[:end]).split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            try:
                length = int(value.strip())
            except ValueError:
                return READY  # the parser refuses it
        elif name == b"transfer-encoding" and b"chunked" in value.lower():
            chunked = True
    if chunked:
        if body > max_body:
            return STREAMED
        done = buf.endswith(b"\r\n0\r\n\r\n") or (body == 5 and buf.endswith(b"0\r\n\r\n"))
        return READY if done else PARTIAL
    if length is None or length <= body:
        return READY
    return STREAMED if length > max_body else PARTIAL


def read_ready(sock: socket.socket, buf: bytearray, limit: int) -> bool:
    """Append what a non-blocking `sock` has now to `buf` (at most until `buf` holds `limit`
    bytes); False when the peer closed or the socket failed."""
    while len(buf) < limit:
        try:
            data = sock.recv(READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return True
        except OSError:
            return False
        if not data:
            return False
        buf += data
        if len(data) < READ_SIZE:
            return True
    return True


def refuse(sock: socket.socket, reply: bytes) -> None:
    """Send `reply` if the socket takes it at once, then close it."""
    try:
        sock.setblocking(False)
        sock.send(reply)
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass


class Arrival:
    """A connection whose request is still arriving."""

    def __init__(self, conn: Any, buf: bytearray, now: float, limits: Limits) -> None:
        self.conn = conn
        self.buf = buf
        self.header_deadline = now + limits.header_timeout_s
        self.deadline = now + limits.request_timeout_s
        self.head_done = False

    def next_deadline(self) -> float:
        return self.deadline if self.head_done else min(self.header_deadline, self.deadline)

    def expired(self, now: float) -> bool:
        return now >= self.next_deadline()


class Reception:
    """The arriving requests of one gunicorn worker, oldest first (the main loop's side)."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.arrivals: dict[int, Arrival] = {}  # by file descriptor, in order of arrival
        self.size = 0  # bytes held by all arrivals

    def __len__(self) -> int:
        return len(self.arrivals)

    def add(self, conn: Any, buf: bytearray, now: float) -> list[Arrival]:
        """Start gathering `conn`'s request; returns the arrivals closed to make room."""
        evicted = []
        while len(self.arrivals) >= self.limits.max_pending:
            evicted.append(self.evict_oldest())
        arrival = Arrival(conn, buf, now, self.limits)
        self.arrivals[conn.sock.fileno()] = arrival
        self.size += len(buf)
        return evicted

    def evict_oldest(self) -> Arrival:
        oldest = next(iter(self.arrivals.values()))
        self.drop(oldest)
        refuse(oldest.conn.sock, TIMEOUT_REPLY)
        return oldest

    def drop(self, arrival: Arrival) -> None:
        """Forget `arrival` (handed to a thread, refused or closed)."""
        self.arrivals.pop(arrival.conn.sock.fileno(), None)
        self.size -= len(arrival.buf)

    def receive(self, fd: int) -> tuple[Arrival, str | None, list[Arrival]]:
        """Read what arrived on `fd`: (its arrival, its state or None when it closed, evicted)."""
        arrival = self.arrivals[fd]
        before = len(arrival.buf)
        limit = self.limits.max_body_bytes + MAX_HEAD_BYTES + 1
        alive = read_ready(arrival.conn.sock, arrival.buf, limit)
        self.size += len(arrival.buf) - before
        if not alive:
            return arrival, None, []
        state = request_state(arrival.buf, self.limits.max_body_bytes)
        if not arrival.head_done:
            arrival.head_done = arrival.buf.find(b"\r\n\r\n") >= 0
        evicted = []
        while self.size > self.limits.max_pending_bytes and len(self.arrivals) > 1:
            oldest = next(iter(self.arrivals.values()))
            if oldest is arrival:
                break
            evicted.append(self.evict_oldest())
        return arrival, state, evicted

    def expired(self, now: float) -> Iterator[Arrival]:
        """The arrivals past a deadline (the caller drops and refuses them)."""
        return iter([a for a in self.arrivals.values() if a.expired(now)])

    def next_deadline(self) -> float | None:
        """The earliest time an arrival may expire (None when there are none)."""
        if not self.arrivals:
            return None
        return min(a.next_deadline() for a in self.arrivals.values())
