"""What /healthz checks beyond the store answering: the App can authenticate, the queue moves.

The App check signs a JWT and calls `GET /app`, at most once a minute per process (probes come
every few seconds; the answer rarely changes). The queue is stuck when deliveries wait and no
worker has taken one, nor seen the queue empty, for `stuck_after_s` (FLAGBOT_STUCK_AFTER_S): each worker records that
moment as its beacon in the ledger (`Worker._beacon`), and this process remembers when it last
saw the queue empty itself.
"""

from __future__ import annotations

import threading
import time

from flagbot.bot.settings import Settings

APP_CHECK_TTL_S = 60.0
APP_CHECK_TIMEOUT_S = 10


class AppCheck:
    """Whether the configured App id and private key authenticate at `GITHUB_API_URL`."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._cached: tuple[float, bool, str] | None = None

    def __call__(self) -> tuple[bool, str]:
        """(healthy, what to show); an App that is not configured is not a failure."""
        settings = self.settings
        if not settings.app_id or not settings.private_key:
            return True, "not configured"
        with self._lock:
            if self._cached and time.monotonic() - self._cached[0] < APP_CHECK_TTL_S:
                return self._cached[1], self._cached[2]
            ok, text = self._probe()
            self._cached = (time.monotonic(), ok, text)
            return ok, text

    def _probe(self) -> tuple[bool, str]:
        from github import Auth, GithubException, GithubIntegration

        settings = self.settings
        where = f"as App {settings.app_id} at {settings.api_url}"
        try:
            integration = GithubIntegration(
                auth=Auth.AppAuth(str(settings.app_id), str(settings.private_key)),
                base_url=settings.api_url, timeout=APP_CHECK_TIMEOUT_S, retry=None)
            slug = integration.get_app().slug
        except GithubException as exc:
            message = exc.data.get("message") if isinstance(exc.data, dict) else exc.data
            return False, (f"cannot authenticate {where}: {exc.status} {message} (check "
                           "GITHUB_APP_ID and the private key)")
        except Exception as exc:
            return False, f"cannot authenticate {where}: {type(exc).__name__}: {exc}"
        return True, f"ok ({slug})"


class QueueWatch:
    """Tells a waiting queue from a stuck one."""

    def __init__(self, stuck_after_s: float) -> None:
        self.stuck_after_s = stuck_after_s
        self.last_empty = time.time()  # a fresh process gives the workers their grace first

    def check(self, waiting: int, beacons: dict[str, float]) -> tuple[bool, str]:
        """(healthy, what to show) for `waiting` queued deliveries and the workers' beacons."""
        now = time.time()
        if waiting == 0:
            self.last_empty = now
            return True, "ok (0 waiting)"
        idle = now - max([self.last_empty, *beacons.values()])
        if idle > self.stuck_after_s:
            seen = f"{len(beacons)} worker(s) seen" if beacons else "no worker has ever reported"
            return False, (f"stuck: {waiting} waiting and none taken for {idle:.0f}s ({seen}); "
                           "is `flagbot worker` running? see its log")
        return True, f"ok ({waiting} waiting)"
