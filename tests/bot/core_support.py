"""Shared parts of the bot-core tests: real servers on free ports, signed deliveries, redis-server,
and fake handlers (`FakeHandlers`) that tests hand to a worker or app, and that
tests/bot/fake_bot.py hands to `flagbot serve` / `flagbot worker` subprocesses.

The fake handlers are driven by a `test` object inside the payload, so one class serves every
scenario: sleep, fail N times, kill its own process, record lock intervals, leave an idempotent
side effect.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from werkzeug.serving import make_server

from flagbot.bot import interest
from flagbot.bot.settings import Settings
from testing.bot_e2e import wait_until

SECRET = "test-secret"
ROOT = Path(__file__).resolve().parents[2]
UNHANDLED = "star"  # an event no handler wants (bot/interest.py)


def sign(body: bytes, secret: str = SECRET) -> str:
    """X-Hub-Signature-256, computed here independently of bot.signature."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def payload(repo: str = "octo/flagos", action: str = "opened", **test: Any) -> dict[str, Any]:
    """A pull_request-shaped payload; `test` steers the handlers below."""
    return {"action": action, "number": 1, "repository": {"full_name": repo},
            "installation": {"id": 1}, "test": test}


def post(url: str, body: dict[str, Any] | bytes, *, event: str = "pull_request",
         delivery: str | None = None, secret: str | None = SECRET,
         headers: dict[str, str] | None = None) -> requests.Response:
    """POST one delivery to `url`/webhook, signed with `secret` (None: unsigned)."""
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    sent = {"Content-Type": "application/json", "X-GitHub-Event": event,
            "X-GitHub-Delivery": delivery or str(uuid.uuid4())}
    if secret is not None:
        sent["X-Hub-Signature-256"] = sign(raw, secret)
    sent.update(headers or {})
    return requests.post(url + "/webhook", data=raw, headers={k: v for k, v in sent.items() if v},
                         timeout=10)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(check: Callable[[], Any], timeout: float = 10.0, what: str = "condition") -> Any:
    """Poll `check` until it returns something truthy (tests' shorter default timeout)."""
    return wait_until(check, timeout, what)


class ServerThread:
    """A real HTTP server (werkzeug, threaded) serving `app` on a free loopback port."""

    def __init__(self, app: Any) -> None:
        self.server = make_server("127.0.0.1", 0, app, threaded=True)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self) -> ServerThread:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.thread.join()


def make_settings(state_dir: Path, **overrides: Any) -> Settings:
    """Settings for a test: secret set, state in `state_dir`, and the slash-command rate
    limits out of the way (tests of the limits set them)."""
    base = Settings(webhook_secret=SECRET, state_dir=state_dir,
                    commands_per_user=10_000, commands_per_pull=10_000,
                    outsider_commands_per_repo=10_000)
    return base.with_overrides(**overrides)


class FakeHandlers:
    """Handlers whose every step is observable in files under the payload's `test.dir`."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def wants(self, event: str, body: dict[str, Any]) -> bool:
        return interest.wanted(event, body)

    def run(self, delivery_id: str, event: str, body: dict[str, Any]) -> dict[str, Any]:
        spec = body.get("test") or {}
        out = Path(spec["dir"]) if spec.get("dir") else None
        tries = 1
        if spec.get("real"):  # the bot's own handlers first (against the emulator), then the plan
            from flagbot.bot.dispatch import BotHandlers

            BotHandlers(self.settings).run(delivery_id, event, body)
        if out is not None:
            with open(out / f"{delivery_id}.tries", "a") as f:
                f.write(f"{os.getpid()}\n")
            tries = len((out / f"{delivery_id}.tries").read_text().splitlines())
            effect = out / f"{delivery_id}.effect"
            if not effect.exists():  # idempotent by delivery, like the sticky comment by its marker
                with open(out / "effects.log", "a") as f:
                    f.write(f"{delivery_id}\n")
                effect.touch()
        if spec.get("kill_self"):  # a poison delivery: its process dies on every try
            os.kill(os.getpid(), 9)
        started = time.time()
        if spec.get("sleep") and (not spec.get("sleep_first_only") or tries == 1):
            time.sleep(float(spec["sleep"]))
        if tries <= int(spec.get("fail_times", 0)):
            raise RuntimeError(f"planned failure {tries}")
        if tries <= int(spec.get("defer_times", 0)):
            from flagbot.bot.handlers.deferred import Deferred

            raise Deferred(f"planned deferral {tries}", 0.1)
        if out is not None and spec.get("intervals"):
            with open(out / "intervals.log", "a") as f:
                f.write(f"{body['repository']['full_name']} {started} {time.time()}\n")
        return {"event": event, "tries": tries, "pid": os.getpid()}


def flagbot_cmd(*args: str) -> list[str]:
    """Run the CLI exactly as users do, from the checkout."""
    return [sys.executable, "-m", "flagbot.hooks.cli", *args]


def fake_bot_cmd(*args: str) -> list[str]:
    """`flagbot serve` / `flagbot worker` with `FakeHandlers` (tests/bot/fake_bot.py)."""
    return [sys.executable, "-m", "tests.bot.fake_bot", *args]


def subprocess_env(settings: Settings, **extra: str) -> dict[str, str]:
    """Environment for a flagbot subprocess matching `settings`."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GITHUB_", "FLAGBOT_", "PROMETHEUS_"))}
    env.update(FLAGBOT_STATE_DIR=str(settings.state_dir), PYTHONPATH=str(ROOT))
    if settings.webhook_secret:
        env["GITHUB_WEBHOOK_SECRET"] = settings.webhook_secret
    if settings.redis_url:
        env["FLAGBOT_REDIS_URL"] = settings.redis_url
    env.update(extra)
    return env


class RedisServer:
    """A real redis-server on a free port, data in a temp dir, nothing persisted."""

    def __init__(self, folder: Path) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(folder),
             "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
        import redis

        self.client = redis.Redis(port=self.port)
        wait_for(self._ping, 10, "redis-server to answer PING")

    def _ping(self) -> bool:
        try:
            return bool(self.client.ping())
        except Exception:
            return False

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A session-wide redis-server; tests flush it (see `redis_url`)."""
    if shutil.which("redis-server") is None:
        if os.environ.get("FLAGBOT_REQUIRE_REDIS") == "1":
            pytest.fail("redis-server is not on PATH but FLAGBOT_REQUIRE_REDIS=1")
        pytest.skip("redis-server not on PATH (install it, e.g. apt-get install redis-server; "
                    "set FLAGBOT_REQUIRE_REDIS=1 to make this a failure)")
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """The Redis URL, with an empty database for this test."""
    redis_server.client.flushall()
    return redis_server.url


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return make_settings(tmp_path / "state")


@pytest.fixture
def server(settings: Settings) -> Iterator[ServerThread]:
    """The app (test wants) under a real werkzeug server; no worker runs."""
    from flagbot.bot.entry.web import create_app

    with ServerThread(create_app(settings)) as srv:
        yield srv
