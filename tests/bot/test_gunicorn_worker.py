"""`flagbot.bot.entry.serving.gunicorn_worker.KeepAliveWorker` in real gunicorn: keep-alive in the serving thread,
pipelining, fairness when connections outnumber threads, idle timeout, errors, graceful stop."""

from __future__ import annotations

import http.client
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from flagbot.bot.entry.serving.gunicorn_worker import FLUSH_AT, CoalescingSocket
from tests.bot.core_support import ROOT, free_port, wait_for


class Gunicorn:
    """gunicorn with the keep-alive worker and tests/bot/gunicorn_worker_app.py."""

    def __init__(self, *, threads: int = 2, keepalive: float = 5) -> None:
        self.port = free_port()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "--workers", "1", "--threads", str(threads),
             "--worker-class", "flagbot.bot.entry.serving.gunicorn_worker.KeepAliveWorker", "--keep-alive", str(keepalive),
             "--bind", f"127.0.0.1:{self.port}", "--graceful-timeout", "10",
             "tests.bot.gunicorn_worker_app:app"],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        wait_for(self._up, 30, "gunicorn to answer")

    def _up(self) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError(f"gunicorn exited:\n{self.proc.stdout.read()}")  # type: ignore[union-attr]
        try:
            return self.get("/up")[0] == 200
        except OSError:
            return False

    def connect(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)

    def get(self, path: str, conn: http.client.HTTPConnection | None = None) -> tuple[int, str]:
        own = conn is None
        conn = conn or self.connect()
        try:
            conn.request("GET", path)
            response = conn.getresponse()
            return response.status, response.read().decode()
        finally:
            if own:
                conn.close()

    def stop(self) -> tuple[int, str]:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        out, _ = self.proc.communicate(timeout=30)
        return self.proc.returncode, out


@pytest.fixture
def server() -> Iterator[Gunicorn]:
    srv = Gunicorn()
    yield srv
    srv.stop()


def raw_exchange(port: int, data: bytes, *, until: bytes, timeout: float = 10) -> bytes:
    """Send `data` on a fresh socket; read until `until` has been seen as often as it was sent."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        got = b""
        while got.count(until) < data.count(b"HTTP/1.1\r\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            got += chunk
        return got


def test_requests_on_one_connection_are_served_on_that_connection(server: Gunicorn) -> None:
    conn = server.connect()
    answers = [server.get(f"/n{i}", conn) for i in range(20)]
    ports = {text.split("port=")[1].split()[0] for _, text in answers}
    assert [code for code, _ in answers] == [200] * 20 and len(ports) == 1
    conn.close()


def test_pipelined_requests_are_answered_in_order(server: Gunicorn) -> None:
    two = (b"POST /first HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
           b"GET /second HTTP/1.1\r\nHost: x\r\n\r\n")
    got = raw_exchange(server.port, two, until=b"HTTP/1.1 200")
    assert got.count(b"HTTP/1.1 200 OK") == 2
    assert got.index(b"/first port=") < got.index(b"/second port=") and b"body=3" in got


def test_a_waiting_connection_gets_a_thread_from_an_idle_one(server: Gunicorn) -> None:
    # two threads, both holding an idle kept-alive connection (keep-alive 5 s)
    held = [server.connect() for _ in range(2)]
    for conn in held:
        assert server.get("/hold", conn)[0] == 200
    started = time.monotonic()
    assert server.get("/third")[0] == 200
    assert time.monotonic() - started < 2.0  # not after the 5 s keep-alive timeout
    for conn in held:
        conn.close()


def test_a_busy_worker_closes_after_each_response_so_nobody_starves() -> None:
    srv = Gunicorn(threads=1)
    try:
        first = srv.connect()
        first.request("GET", "/sleep/0.5")
        time.sleep(0.1)
        second = srv.connect()
        second.request("GET", "/second")  # waits for the only thread
        response = first.getresponse()
        response.read()
        assert response.getheader("Connection") == "close"
        assert second.getresponse().status == 200
    finally:
        srv.stop()


def test_an_idle_connection_is_closed_after_the_keep_alive_timeout() -> None:
    srv = Gunicorn(keepalive=1)
    try:
        with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as sock:
            sock.sendall(b"GET /once HTTP/1.1\r\nHost: x\r\n\r\n")
            first = sock.recv(65536)
            assert first.startswith(b"HTTP/1.1 200")
            started = time.monotonic()
            assert sock.recv(65536) == b""  # the server closed it
            assert 0.8 < time.monotonic() - started < 5
    finally:
        srv.stop()


def test_a_connection_close_request_gets_one_answer(server: Gunicorn) -> None:
    got = raw_exchange(server.port, b"GET /bye HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                       until=b"HTTP/1.1 200")
    assert got.startswith(b"HTTP/1.1 200") and b"Connection: close" in got


def test_an_app_error_before_the_response_is_a_clean_500(server: Gunicorn) -> None:
    got = raw_exchange(server.port, b"GET /boom HTTP/1.1\r\nHost: x\r\n\r\n", until=b"HTTP/1.1 ")
    assert got.startswith(b"HTTP/1.1 500") and got.count(b"HTTP/1.1 ") == 1
    assert server.get("/after")[0] == 200  # the worker lives on
    _, log = server.stop()
    assert "before any byte of the response" in log


def test_an_app_error_mid_body_cuts_the_connection(server: Gunicorn) -> None:
    conn = server.connect()
    conn.request("GET", "/half")
    response = conn.getresponse()
    assert response.status == 200
    with pytest.raises(http.client.IncompleteRead):
        response.read()
    assert server.get("/after")[0] == 200


def test_sigterm_lets_the_request_in_flight_finish(server: Gunicorn) -> None:
    conn = server.connect()
    conn.request("GET", "/sleep/1.0")
    time.sleep(0.3)
    server.proc.send_signal(signal.SIGTERM)
    response = conn.getresponse()
    assert response.status == 200 and response.read().startswith(b"/sleep/1.0")
    code, _ = server.stop()
    assert code == 0


def test_coalescing_socket_sends_a_response_in_one_write() -> None:
    left, right = socket.socketpair()
    with left, right:
        out = CoalescingSocket(left)
        out.sendall(b"HTTP/1.1 200 OK\r\n\r\n")
        out.sendall(b"body")
        right.setblocking(False)
        with pytest.raises(BlockingIOError):
            right.recv(100)  # nothing before flush
        assert not out.wrote
        out.flush()
        assert out.wrote and right.recv(100) == b"HTTP/1.1 200 OK\r\n\r\nbody"
        out.start()
        out.sendall(b"x" * FLUSH_AT)  # a large part leaves at once
        right.setblocking(True)
        assert len(right.recv(FLUSH_AT * 2)) > 0 and out.wrote


def test_coalescing_socket_flushes_before_sendfile(tmp_path) -> None:
    data = tmp_path / "file"
    data.write_bytes(b"FILE")
    left, right = socket.socketpair()
    with left, right, data.open("rb") as f:
        out = CoalescingSocket(left)
        out.sendall(b"HEAD|")
        out.sendfile(f)
        left.shutdown(socket.SHUT_WR)
        got = b""
        while chunk := right.recv(100):
            got += chunk
        assert got == b"HEAD|FILE"
