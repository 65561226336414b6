"""The `GET /dashboard` view, imported by the route on first use (the web process stays small
for the webhook: nothing here loads until someone opens the page)."""

from __future__ import annotations

from dataclasses import dataclass

from flask import Flask, Request, Response
from jinja2 import Environment

from flagbot.bot.dashboard import access, view
from flagbot.bot.dashboard.factory import open_store
from flagbot.bot.dashboard.store import DashStore
from flagbot.bot.settings import Settings

# no script runs on the page and nothing is fetched from elsewhere; links leave no referrer
HEADERS = {"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
                                      "form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
           "Cache-Control": "no-store", "Referrer-Policy": "no-referrer",
           "X-Content-Type-Options": "nosniff"}


@dataclass
class Parts:
    """What the view keeps between requests: the templates and the store, opened once."""

    env: Environment
    store: DashStore


def parts(app: Flask, settings: Settings) -> Parts:
    found = app.extensions.get("flagbot_dashboard")
    if found is None:
        found = app.extensions["flagbot_dashboard"] = Parts(view.environment(), open_store(settings))
    assert isinstance(found, Parts)
    return found


def serve(app: Flask, settings: Settings, sources: view.Sources, request: Request) -> Response:
    """GET /dashboard: the page, or 404/401 with a plain message and no data."""
    code, how = access.decide(settings, request.headers.get("Authorization", ""), request.args,
                               request.cookies)
    if code != 200:
        extra = {"WWW-Authenticate": 'Bearer realm="flagbot dashboard"'} if code == 401 else {}
        return Response(how, status=code, mimetype="text/plain", headers={**HEADERS, **extra})
    found = parts(app, settings)
    args = {k: v for k, v in request.args.items() if k != "token"}
    page = view.render(found.env, sources, found.store, args)
    response = Response(page, mimetype="text/html", headers=HEADERS)
    if how == "query" and settings.dashboard_token:
        response.set_cookie(access.COOKIE, access.cookie_value(settings.dashboard_token),
                            httponly=True, samesite="Strict", path="/dashboard",
                            secure=request.is_secure)
    return response
