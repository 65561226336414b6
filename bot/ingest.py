"""Ingest: one `POST /webhook` delivery from the wire to the queue.

Size first, then the signature (`signature.py`, before anything else is read from the body),
then the headers and the payload; the delivery is recorded in the ledger (`wanted` by the
interest filter, `interest.py`), its id queued, and 202 answered: it never waits for GitHub API
calls or git work (the worker does those). `entry/serving/fastpath.py` is this step's route.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from typing import IO, TYPE_CHECKING, Any
from urllib.parse import parse_qs

from werkzeug.wsgi import get_content_length, get_input_stream

from flagbot.bot import interest
from flagbot.bot.feed.log import LabelLog
from flagbot.bot.monitoring import metrics
from flagbot.bot.settings import Settings
from flagbot.bot.signature import verify
from flagbot.bot.store import Ledger, Queue
from flagbot.bot.store.factory import open_label_log, open_ledger, open_queue

if TYPE_CHECKING:
    from _typeshed.wsgi import WSGIEnvironment

log = logging.getLogger(__name__)

# (HTTP status, JSON body) of one webhook request
Answer = tuple[int, dict[str, Any]]

DELIVERY_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
READ_CHUNK = 1 << 16
NO_SECRET = ("no webhook secret configured: set GITHUB_WEBHOOK_SECRET (the App's webhook secret); "
             "every delivery is refused until then")


def missing_config(settings: Settings) -> list[str]:
    """The GitHub settings still unset (the server runs, but cannot do everything without them)."""
    missing = []
    if not settings.webhook_secret:
        missing.append("GITHUB_WEBHOOK_SECRET (deliveries get 401)")
    if not settings.app_id:
        missing.append("GITHUB_APP_ID (handlers cannot call GitHub)")
    if not settings.private_key:
        missing.append("GITHUB_PRIVATE_KEY or GITHUB_PRIVATE_KEY_PATH (handlers cannot call GitHub)")
    return missing


class Backend:
    """The ledger and queue, opened on first use so the server starts even when they are down."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._ledger: Ledger | None = None
        self._queue: Queue | None = None
        self._label_log: LabelLog | None = None
        self._lock = threading.Lock()

    @property
    def ledger(self) -> Ledger:
        if self._ledger is None:
            with self._lock:
                if self._ledger is None:
                    self._ledger = open_ledger(self.settings)
        return self._ledger

    @property
    def queue(self) -> Queue:
        if self._queue is None:
            with self._lock:
                if self._queue is None:
                    self._queue = open_queue(self.settings)
        return self._queue

    @property
    def label_log(self) -> LabelLog:
        if self._label_log is None:
            with self._lock:
                if self._label_log is None:
                    self._label_log = open_label_log(self.settings)
        return self._label_log


def read_body(stream: IO[bytes], limit: int) -> bytes | None:
    """The raw request body, or None when it is longer than `limit` (streamed bodies included)."""
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = stream.read(READ_CHUNK)
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if total > limit:
            return None
        chunks.append(chunk)


def parse_payload(body: bytes, content_type: str) -> tuple[dict[str, Any], bytes] | None:
    """The payload object and its JSON bytes (decoded once here from the form encoding GitHub
    can be set to, so the ledger holds JSON either way); None when broken.

    Nesting deeper than the JSON parser's recursion limit is broken too (RecursionError).
    """
    try:
        if content_type.startswith("application/x-www-form-urlencoded"):
            body = parse_qs(body.decode("utf-8"), strict_parsing=True)["payload"][0].encode()
        data = json.loads(body)
    except (ValueError, KeyError, IndexError, UnicodeDecodeError, RecursionError):
        return None
    return (data, body) if isinstance(data, dict) else None


def ingest(settings: Settings, backend: Backend, environ: WSGIEnvironment) -> Answer:
    """Handle one POST /webhook (see the module docstring for the order of checks).

    It reads the WSGI environ the way Flask's `request` does (werkzeug's own helpers), though
    only the raw-WSGI fast path (`entry/serving/fastpath.py`) calls it.
    """
    limit = settings.max_body_bytes
    content_length = get_content_length(environ)
    if content_length is not None and content_length > limit:
        metrics.delivery("unknown", "too_large")
        return 413, {"error": f"body of {content_length} bytes is over the {limit}-byte limit"}
    body = read_body(get_input_stream(environ), limit)
    if body is None:
        metrics.delivery("unknown", "too_large")
        return 413, {"error": f"body is over the {limit}-byte limit"}
    secrets = [s for s in (settings.webhook_secret, settings.webhook_secret_previous) if s]
    if not secrets:
        log.error("webhook refused: %s", NO_SECRET)
        metrics.delivery("unknown", "no_secret")
        return 401, {"error": NO_SECRET}
    if not verify(body, environ.get("HTTP_X_HUB_SIGNATURE_256"), secrets):
        log.warning("webhook refused from %s: bad or missing X-Hub-Signature-256",
                    environ.get("REMOTE_ADDR"))
        metrics.delivery("unknown", "bad_signature")
        return 401, {"error": "bad or missing X-Hub-Signature-256 (check the App's webhook secret)"}
    event = environ.get("HTTP_X_GITHUB_EVENT", "")
    delivery_id = environ.get("HTTP_X_GITHUB_DELIVERY", "")
    if not event or not DELIVERY_ID.match(delivery_id):
        metrics.delivery(event or "unknown", "bad_request")
        return 400, {"error": "missing X-GitHub-Event or a valid X-GitHub-Delivery header"}
    parsed = parse_payload(body, environ.get("CONTENT_TYPE", ""))
    if parsed is None:
        log.warning("delivery %s refused: body is not a JSON object", delivery_id)
        metrics.delivery(event, "bad_request")
        return 400, {"error": "body is not a JSON object"}
    payload, payload_json = parsed
    if event == "ping":
        metrics.delivery(event, "pong")
        return 200, {"msg": "pong", "zen": payload.get("zen")}
    return record_and_queue(backend, event, delivery_id, payload, payload_json)


def record_and_queue(backend: Backend, event: str, delivery_id: str,
                     payload: dict[str, Any], body: bytes) -> Answer:
    """Ledger first, queue second: a row never goes missing, a lost message is swept up.

    `body` is the payload's JSON (never the form encoding): what the worker parses again.
    """
    action = payload.get("action") if isinstance(payload.get("action"), str) else None
    repo_obj = payload.get("repository")
    repo = repo_obj.get("full_name") if isinstance(repo_obj, dict) else None
    try:
        recorded = backend.ledger.record(delivery_id=delivery_id, event=event, action=action,
                                         repo=repo if isinstance(repo, str) else None,
                                         payload=body, wanted=interest.wanted(event, payload))
    except Exception as exc:
        log.exception("delivery %s: ledger unavailable", delivery_id)
        metrics.delivery(event, "ledger_error")
        return 503, {"error": f"ledger unavailable ({exc}); GitHub can redeliver this later"}
    if recorded.enqueue:
        try:
            backend.queue.enqueue(delivery_id)
        except Exception as exc:
            log.exception("delivery %s: queue unavailable", delivery_id)
            metrics.delivery(event, "queue_error")
            return 503, {"error": f"queue unavailable ({exc}); the delivery is recorded and "
                         "runs when a worker's sweep finds it or GitHub redelivers it"}
    metrics.delivery(event, recorded.outcome)
    note = recorded.note
    if recorded.outcome == "dropped" and event in interest.INTEREST:
        note = f"the bot does not act on {event}.{action}"  # the event has a handler, not this action
    return 202, {"delivery": delivery_id, "event": event, "outcome": recorded.outcome,
                 "note": note}
