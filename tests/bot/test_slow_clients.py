"""Slow clients against `flagbot serve` (real gunicorn, the keep-alive worker, loopback sockets):
stalled connections hold no thread, are closed at their deadline, and make room for newcomers."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from flagbot.bot.entry.serving.reception import (
    HEAD_TOO_LARGE,
    PARTIAL,
    READY,
    STREAMED,
    request_state,
)
from flagbot.bot.settings import Settings
from tests.bot.core_support import make_settings, payload, post
from tests.bot.test_cli import Served

STALLS = 64


def stall(port: int, kind: int) -> socket.socket:
    """A connection that sends part of a request and then nothing: headers cut short, or
    headers with part of a body."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    if kind % 2:
        sock.sendall(b"POST /webhook HTTP/1.1\r\nHost: x\r\nX-GitHub-Event: pull_re")
    else:
        sock.sendall(b"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 5000\r\n\r\n{\"action\": ")
    return sock


def trickle(socks: list[socket.socket], stop: threading.Event) -> None:
    """One byte every half second on each socket (a slow-loris that keeps sending)."""
    while not stop.wait(0.5):
        for sock in socks:
            try:
                sock.send(b"x")
            except OSError:
                pass


def closed_within(sock: socket.socket, seconds: float) -> float | None:
    """Seconds until the server ends the connection (after any reply), None if it stays open."""
    started = time.monotonic()
    sock.settimeout(seconds)
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        return None
    except OSError:
        pass
    return time.monotonic() - started


def signed_latency(url: str, n: int) -> list[float]:
    out = []
    for i in range(n):
        started = time.monotonic()
        r = post(url, payload(), delivery=f"real-{i}-{time.time_ns()}")
        out.append(time.monotonic() - started)
        assert r.status_code == 202, r.text
    return out


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Served, Settings]]:
    settings = make_settings(tmp_path / "state")
    srv = Served(settings, "--no-worker", env_extra={"FLAGBOT_REQUEST_HEADER_TIMEOUT_S": "2",
                                                     "FLAGBOT_REQUEST_TIMEOUT_S": "4"})
    yield srv, settings
    srv.stop()


def test_a_signed_delivery_is_answered_within_a_second_while_64_connections_stall(served) -> None:
    srv, _ = served
    socks = [stall(srv.port, i) for i in range(STALLS)]
    stop = threading.Event()
    trickler = threading.Thread(target=trickle, args=(socks[:8], stop), daemon=True)
    trickler.start()
    try:
        time.sleep(0.5)  # every stalled connection is in
        latencies = signed_latency(srv.url, 5)
        assert max(latencies) < 1.0, latencies
    finally:
        stop.set()
        trickler.join()
        for sock in socks:
            sock.close()


def test_stalled_connections_are_closed_at_their_deadline(served) -> None:
    srv, _ = served
    head = stall(srv.port, 1)  # headers never finish: 2 s
    body = stall(srv.port, 0)  # body never finishes: 4 s
    stop = threading.Event()
    slow = stall(srv.port, 1)
    trickler = threading.Thread(target=trickle, args=([slow], stop), daemon=True)
    trickler.start()
    try:
        for sock, limit in ((head, 2), (body, 4), (slow, 2)):
            waited = closed_within(sock, 8)
            assert waited is not None and waited < limit + 1.5, (limit, waited)
    finally:
        stop.set()
        trickler.join()
        for sock in (head, body, slow):
            sock.close()


def test_a_slow_body_gets_408(served) -> None:
    srv, _ = served
    sock = stall(srv.port, 0)
    sock.settimeout(10)
    got = b""
    while chunk := sock.recv(4096):
        got += chunk
    assert got.startswith(b"HTTP/1.1 408"), got
    sock.close()


def test_the_oldest_stalled_connections_make_room_for_new_ones(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "state")
    srv = Served(settings, "--no-worker", "--workers", "1",
                 env_extra={"FLAGBOT_MAX_PENDING_CONNECTIONS": "8"})
    try:
        socks = [stall(srv.port, i) for i in range(20)]
        time.sleep(0.5)
        assert max(signed_latency(srv.url, 3)) < 1.0
        # the first stalled ones were closed to make room, long before their 10 s deadline
        assert closed_within(socks[0], 2) is not None
        for sock in socks:
            sock.close()
    finally:
        srv.stop()


def test_a_keep_alive_request_split_in_pieces_is_still_served(served) -> None:
    srv, _ = served
    body = json.dumps(payload()).encode()
    from tests.bot.core_support import sign

    head = (b"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"X-GitHub-Event: pull_request\r\nX-GitHub-Delivery: split-%d\r\n"
            b"X-Hub-Signature-256: " + sign(body).encode() + b"\r\n"
            b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n")
    with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as sock:
        for n in range(3):
            request = (head % n) + body
            for i in range(0, len(request), 40):  # in 40-byte pieces, a little apart
                sock.sendall(request[i:i + 40])
                time.sleep(0.01)
            reply = sock.recv(65536)
            assert reply.startswith(b"HTTP/1.1 202"), reply


@pytest.mark.parametrize("data,state", [
    (b"GET / HTTP/1.1\r\nHost: x\r\n", PARTIAL),
    (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", READY),
    (b"POST / HTTP/1.1\r\ncontent-length: 4\r\n\r\nab", PARTIAL),
    (b"POST / HTTP/1.1\r\nContent-Length: 4\r\n\r\nabcd", READY),
    (b"POST / HTTP/1.1\r\nContent-Length: 999\r\n\r\n", STREAMED),
    (b"POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n", READY),
    (b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n", PARTIAL),
    (b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n", READY),
    (b"GET / HTTP/1.1\r\nX: " + b"a" * 70_000, HEAD_TOO_LARGE),
])
def test_request_state(data: bytes, state: str) -> None:
    assert request_state(data, max_body=100) == state
