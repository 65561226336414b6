"""The web app gunicorn serves: `POST /webhook` (ingest, through its fast path), `/healthz`,
`/metrics`, `/feeds/<label>.atom` and `/dashboard`."""

from __future__ import annotations

import json
import logging
from typing import Any

from flask import Flask, Response, request

from flagbot.bot.entry.serving.fastpath import WebhookFastPath
from flagbot.bot.feed import atom
from flagbot.bot.ingest import Backend, ingest, missing_config
from flagbot.bot.monitoring import metrics
from flagbot.bot.monitoring.health import AppCheck, QueueWatch
from flagbot.bot.settings import Settings

log = logging.getLogger(__name__)


def reply(code: int, **body: Any) -> Response:
    """A JSON response."""
    return Response(json.dumps(body), status=code, mimetype="application/json")


def health(settings: Settings, backend: Backend, app_check: AppCheck, watch: QueueWatch) -> Response:
    """GET /healthz: 200 when the queue answers and moves, the ledger takes a write and the App
    (when configured) authenticates; else 503 with the reasons."""
    checks: dict[str, str] = {}
    ok = True
    try:
        waiting = backend.queue.depth()
    except Exception as exc:
        ok, checks["queue"] = False, f"unreachable: {exc}"
    else:
        try:
            beacons = backend.ledger.beacons()
        except Exception:
            beacons = {}  # the ledger's own check below says why
        moving, checks["queue"] = watch.check(waiting, beacons)
        ok = ok and moving
    try:
        backend.ledger.check_writable()
        checks["ledger"] = "ok"
    except Exception as exc:
        ok, checks["ledger"] = False, f"not writable: {exc}"
    authenticated, checks["github_app"] = app_check()
    ok = ok and authenticated
    missing = missing_config(settings)
    checks["config"] = "missing " + "; ".join(missing) if missing else "ok"
    return reply(200 if ok else 503, status="ok" if ok else "unhealthy", checks=checks)


def create_app(settings: Settings | None = None) -> Flask:
    """Build the app (from the environment's settings unless given)."""
    settings = settings or Settings.from_env()
    backend = Backend(settings)
    app_check, watch = AppCheck(settings), QueueWatch(settings.stuck_after_s)
    app = Flask("flagbot")
    for line in [] if settings.startup_warned else missing_config(settings):
        log.warning("flagbot: not configured: %s", line)

    @app.get("/healthz")
    def healthz() -> Response:
        """Queue, ledger and App health."""
        return health(settings, backend, app_check, watch)

    @app.get("/metrics")
    def metrics_view() -> Response:
        """Prometheus text exposition."""
        state = metrics.StateCollector(lambda: backend.queue.depth(),
                                       lambda: backend.ledger.counts())
        return Response(metrics.render(state, multiproc_dir=settings.metrics_dir),
                        content_type=metrics.CONTENT_TYPE)

    @app.get("/feeds/<path:name>")
    def feeds(name: str) -> Response:
        """Atom feed of merged PRs carrying a label: /feeds/<label>.atom[?repo=owner/name]."""
        code, body, content_type = atom.serve(backend.label_log, name, request.args, request.url)
        return Response(body, status=code, content_type=content_type,
                        headers={"Retry-After": "2"} if code == 503 else None)

    @app.get("/dashboard")
    def dashboard() -> Response:
        """Deliveries, queue, device runs, kernel speed and the labeled-PR feed, for people."""
        from flagbot.bot.dashboard import web  # loaded on first view, not by the webhook path

        return web.serve(app, settings, backend, request)

    app.extensions["flagbot"] = backend
    # the one route of /webhook: Flask has no view for it
    app.wsgi_app = WebhookFastPath(app, app.wsgi_app,  # type: ignore[method-assign]
                                   lambda environ: ingest(settings, backend, environ))
    return app
