"""One request through the emulator: injected faults, routing, credentials, errors, rate headers."""

from __future__ import annotations

import time
import traceback
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from testing.github_emulator.routes import ROUTES
from testing.github_emulator.server import RATE_LIMIT, ApiError, Fault, Reply, Request, error_body

if TYPE_CHECKING:
    from testing.github_emulator.emulator import Emulator

WINDOW_S = 3600


class RateWindow:
    """GitHub's hourly core rate-limit window, counted per reply (informational: never enforced)."""

    def __init__(self) -> None:
        self.used = 0
        self.reset = int(time.time()) + WINDOW_S

    def usage(self) -> tuple[int, int]:
        """(requests used in the current window, window reset epoch)."""
        now = int(time.time())
        if now >= self.reset:
            self.used, self.reset = 0, now + WINDOW_S
        return self.used, self.reset

    def headers(self, extra: dict[str, str]) -> dict[str, str]:
        """The x-ratelimit-* headers of one reply (counting it), overridden by `extra`."""
        self.used += 1
        used, reset = self.usage()
        headers = {
            "X-RateLimit-Limit": str(RATE_LIMIT),
            "X-RateLimit-Remaining": str(max(0, RATE_LIMIT - used)),
            "X-RateLimit-Reset": str(reset),
            "X-RateLimit-Used": str(used),
            "X-RateLimit-Resource": "core",
        }
        lower = {k.lower() for k in extra}
        headers = {k: v for k, v in headers.items() if k.lower() not in lower}
        headers.update(extra)
        return headers


def take_fault(faults: list[Fault], method: str, path: str) -> Fault | None:
    """Consume the oldest live fault matching `method` and the whole decoded `path`."""
    for fault in faults:
        if fault.times > 0 and fault.method == method and fault.path.fullmatch(path):
            fault.times -= 1
            return fault
    return None


def dispatch(emu: Emulator, method: str, raw_path: str, path: str, query: dict[str, str], body: Any,
             parse_error: bool, auth: str) -> Reply:
    """Answer one request (the caller holds the state lock)."""
    fault = take_fault(emu.faults, method, path)
    if fault is not None:
        return Reply(fault.status, fault.body, dict(fault.headers))
    try:
        if parse_error:
            raise ApiError(400, "Problems parsing JSON")
        for r_method, pattern, cred, handler in ROUTES:
            m = pattern.fullmatch(raw_path)
            if m is None or r_method != method:
                continue
            if cred not in (auth, "any"):
                hint = emu.auth.last_jwt_error if cred == "app" else "a live installation token"
                raise ApiError(401, f"Bad credentials (this endpoint needs {cred} auth: {hint})")
            params = {k: unquote(v) for k, v in m.groupdict().items()}
            return handler(Request(emu, method, path, raw_path, query, body, params, auth))
        raise ApiError(404, "Not Found")
    except ApiError as err:
        return Reply(err.status, error_body(err))
    except Exception:  # a crash in the emulator must reach the test as a 500, not hang the client
        tb = traceback.format_exc()
        emu.server_errors.append(tb)
        return Reply(500, {"message": f"emulator crashed: {tb.splitlines()[-1]}"})
