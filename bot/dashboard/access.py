"""Who may see `GET /dashboard`.

With `FLAGBOT_DASHBOARD_TOKEN` set, a request shows the token as `Authorization: Bearer <token>`
or `?token=<token>` (compared in constant time). A browser that came with `?token=` gets a
cookie holding a keyed digest of the token (never the token itself), so the page's own links
and filter form work without the token in them. Without a token the dashboard is off, unless
`FLAGBOT_DASHBOARD_PUBLIC=1` opens it to everyone who can reach the server.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping

from flagbot.bot.settings import Settings

COOKIE = "flagbot_dashboard"
OFF = ("the dashboard is off: set FLAGBOT_DASHBOARD_TOKEN (and send it as `Authorization: "
       "Bearer <token>` or `?token=<token>`), or FLAGBOT_DASHBOARD_PUBLIC=1 to open it to all\n")
DENIED = ("401: the dashboard needs its token: send `Authorization: Bearer <token>` or open "
          "/dashboard?token=<token> (the token is FLAGBOT_DASHBOARD_TOKEN)\n")


def cookie_value(token: str) -> str:
    """What the cookie holds: a digest keyed by the token, useless elsewhere."""
    return hmac.new(token.encode(), b"flagbot dashboard cookie", hashlib.sha256).hexdigest()


def _same(given: str | None, expected: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


def decide(settings: Settings, authorization: str, args: Mapping[str, str],
           cookies: Mapping[str, str]) -> tuple[int, str]:
    """(200, how) when the request may see the page (`how`: public, bearer, query, cookie),
    else (404 or 401, the message to show)."""
    token = settings.dashboard_token
    if not token:
        return (200, "public") if settings.dashboard_public else (404, OFF)
    scheme, _, given = authorization.partition(" ")
    if scheme.lower() == "bearer" and _same(given.strip(), token):
        return 200, "bearer"
    if _same(args.get("token"), token):
        return 200, "query"
    if _same(cookies.get(COOKIE), cookie_value(token)):
        return 200, "cookie"
    return 401, DENIED
