"""Whether `FLAGBOT_REDIS_URL` names a Redis server that answers, said in one line.

The commands that work through Redis in that mode (`flagbot worker`, `labeled`, `reconcile`,
`drift`, and `replay` acting on GitHub) ask first: a wrong URL or a stopped server is an environment error (exit 2) with the reason,
not a traceback from deep inside the first script call. `flagbot serve` keeps answering
instead and reports the same reason on `/healthz` (503), since its server must stay up.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from flagbot.hooks.errors import UsageError

CONNECT_TIMEOUT_S = 5.0
SCHEMES = "redis://HOST:PORT/DB, rediss://HOST:PORT/DB or unix:///PATH/redis.sock"


def shown(url: str) -> str:
    """The URL without its password, for messages (the address alone says where we looked)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "(unparsable)"
    address = parts.netloc.rpartition("@")[2]  # user and password stay out
    return f"{parts.scheme}://{address}{parts.path}" if parts.scheme else "(no scheme)"


def require_redis(url: str) -> None:
    """Return when a Redis server answers PING at `url`; else UsageError naming what failed."""
    import redis  # only where Redis mode is used

    fix = "start Redis there, correct FLAGBOT_REDIS_URL, or unset it to use the SQLite queue"
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=CONNECT_TIMEOUT_S,
                                      socket_timeout=CONNECT_TIMEOUT_S)
    except ValueError as exc:
        raise UsageError(f"FLAGBOT_REDIS_URL {shown(url)}: not a Redis URL ({exc}); "
                         f"use {SCHEMES}") from None
    try:
        client.ping()
    except (redis.exceptions.RedisError, OSError) as exc:
        raise UsageError(f"FLAGBOT_REDIS_URL {shown(url)}: no Redis answers ({exc}); {fix}") from None
    finally:
        client.close()
