"""The App's webhook and its delivery log: deliveries really POSTed to the bot, and redelivered.

GitHub keeps every delivery attempt of an App's webhook (`GET /app/hook/deliveries`, newest
first, paged by an opaque `cursor` carried in the Link header) and sends one again on request
(`POST /app/hook/deliveries/{id}/attempts`, answered 202, the new attempt logged with
`redelivery: true` and the same `guid`, which is the `X-GitHub-Delivery` header). The shapes
follow GitHub's published REST description (apps/list-webhook-deliveries,
apps/get-webhook-delivery, apps/redeliver-webhook-delivery).

Here a test sets the webhook (`emu.set_webhook(url, secret)`) and sends events
(`emu.deliver(event, payload)`): each is POSTed, signed, to the URL and logged with what came
back, "failed to connect" when nothing listened. A redelivery is POSTed from a background
thread, as GitHub does it after answering 202; `emu.wait_deliveries()` waits for those.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import requests

from testing.github_emulator.server import ApiError, Reply, Request, invalid, not_found
from testing.github_emulator.state import iso
from testing.webhooks import delivery_headers

if TYPE_CHECKING:
    from testing.github_emulator.emulator import Emulator

DELIVERY_TIMEOUT_S = 10.0  # GitHub gives up on a webhook after 10 s
CURSOR_PREFIX = "v1_"


@dataclass
class HookDelivery:
    """One delivery attempt as GitHub logs it (`request`/`response` only in the single view)."""

    id: int
    guid: str
    event: str
    action: str | None
    installation_id: int | None
    repository_id: int | None
    delivered_at: float
    redelivery: bool
    payload: dict[str, Any]
    request_headers: dict[str, str] = field(default_factory=dict)
    status: str = "pending"
    status_code: int = 0
    duration: float = 0.0
    response_headers: dict[str, str] = field(default_factory=dict)
    response_body: str = ""
    url: str = ""

    def simple(self) -> dict[str, Any]:
        """The list view ("Simple webhook delivery")."""
        return {"id": self.id, "guid": self.guid, "delivered_at": iso(self.delivered_at),
                "redelivery": self.redelivery, "duration": round(self.duration, 3),
                "status": self.status, "status_code": self.status_code, "event": self.event,
                "action": self.action, "installation_id": self.installation_id,
                "repository_id": self.repository_id, "throttled_at": None}

    def full(self) -> dict[str, Any]:
        """The single view ("Webhook delivery"): plus url, request and response."""
        return {**self.simple(), "url": self.url,
                "request": {"headers": dict(self.request_headers), "payload": self.payload},
                "response": {"headers": dict(self.response_headers),
                             "payload": self.response_body}}


class HookLog:
    """The webhook configuration and every attempt so far (ids grow with time, as on GitHub)."""

    def __init__(self) -> None:
        self.url = ""
        self.secret = ""
        self.deliveries: list[HookDelivery] = []
        self.threads: list[threading.Thread] = []

    def find(self, delivery_id: int) -> HookDelivery:
        """The attempt with this id (404 otherwise)."""
        for d in self.deliveries:
            if d.id == delivery_id:
                return d
        raise not_found()


def post(log: HookLog, attempt: HookDelivery) -> None:
    """POST the attempt's payload, signed, to the webhook URL and log the outcome (no lock held:
    the receiver may be slow, and the emulator must keep answering meanwhile)."""
    body = json.dumps(attempt.payload).encode()
    headers = delivery_headers(attempt.event, body, log.secret, attempt.guid)
    attempt.request_headers, attempt.url = headers, log.url
    started = time.monotonic()
    try:
        reply = requests.post(log.url, data=body, headers=headers, timeout=DELIVERY_TIMEOUT_S)
    except requests.Timeout:
        attempt.status, attempt.status_code = "timed out", 0
    except requests.RequestException:
        attempt.status, attempt.status_code = "failed to connect", 0
    else:
        attempt.status_code = reply.status_code
        attempt.status = "OK" if 200 <= reply.status_code < 300 else "Invalid HTTP Response: " \
            f"{reply.status_code}"
        attempt.response_headers = dict(reply.headers)
        attempt.response_body = reply.text[:10000]
    attempt.duration = time.monotonic() - started


def new_attempt(emu: Emulator, guid: str, event: str, payload: dict[str, Any],
                redelivery: bool) -> HookDelivery:
    """Log a new attempt (status pending until `post` fills it in)."""
    repo = payload.get("repository") if isinstance(payload.get("repository"), dict) else None
    inst = payload.get("installation") if isinstance(payload.get("installation"), dict) else None
    with emu.state.lock:
        attempt = HookDelivery(emu.state.next_id(), guid, event, payload.get("action"),
                               (inst or {}).get("id"), (repo or {}).get("id"), time.time(),
                               redelivery, payload)
        emu.hooks.deliveries.append(attempt)
    return attempt


def deliver(emu: Emulator, event: str, payload: dict[str, Any], guid: str | None = None) -> dict[str, Any]:
    """Send one event to the webhook now (synchronously); returns the logged attempt (full view)."""
    if not emu.hooks.url:
        raise ValueError("emulator: set the webhook first: emu.set_webhook(url, secret)")
    attempt = new_attempt(emu, guid or str(uuid.uuid4()), event, payload, redelivery=False)
    post(emu.hooks, attempt)
    return attempt.full()


# -- routes (App JWT) ---------------------------------------------------------------------------

def _per_page(req: Request) -> int:
    try:
        return max(1, min(100, int(req.query.get("per_page", "30"))))
    except ValueError as exc:
        raise ApiError(400, "per_page must be an integer") from exc


def list_deliveries(req: Request) -> Reply:
    """GET /app/hook/deliveries: newest first; `cursor` names the page's first delivery, the
    Link header carries the next (and previous) page's cursor; `status` filters success
    (2xx-3xx) or failure."""
    per_page = _per_page(req)
    status = req.query.get("status")
    if status not in (None, "success", "failure"):
        raise invalid(f"status {status!r} is not one of success, failure", "HookDelivery", "status")
    items = sorted(req.emu.hooks.deliveries, key=lambda d: d.id, reverse=True)
    items = [d for d in items if d.status != "pending"]  # GitHub lists an attempt once made
    if status is not None:
        ok = {d.id for d in items if 200 <= d.status_code < 400}
        items = [d for d in items if (d.id in ok) == (status == "success")]
    start = 0
    cursor = req.query.get("cursor")
    if cursor:
        if not cursor.startswith(CURSOR_PREFIX) or not cursor[len(CURSOR_PREFIX):].isdigit():
            raise ApiError(400, "Invalid cursor")
        first = int(cursor[len(CURSOR_PREFIX):])
        start = next((i for i, d in enumerate(items) if d.id <= first), len(items))
    page = items[start:start + per_page]
    links = []
    base = {k: v for k, v in req.query.items() if k != "cursor"}
    if start + per_page < len(items):
        q = urlencode({**base, "per_page": str(per_page),
                       "cursor": f"{CURSOR_PREFIX}{items[start + per_page].id}"})
        links.append(f'<{req.emu.url}/app/hook/deliveries?{q}>; rel="next"')
    if start > 0:
        prev = items[max(0, start - per_page)].id
        q = urlencode({**base, "per_page": str(per_page), "cursor": f"{CURSOR_PREFIX}{prev}"})
        links.append(f'<{req.emu.url}/app/hook/deliveries?{q}>; rel="prev"')
    return Reply(200, [d.simple() for d in page], {"Link": ", ".join(links)} if links else {})


def get_delivery(req: Request) -> Reply:
    """GET /app/hook/deliveries/{delivery_id}."""
    return Reply(200, req.emu.hooks.find(int(req.params["delivery_id"])).full())


def redeliver(req: Request) -> Reply:
    """POST /app/hook/deliveries/{delivery_id}/attempts: 202, then the payload goes out again
    (same guid) from a background thread, logged as a new attempt with `redelivery: true`."""
    emu = req.emu
    old = emu.hooks.find(int(req.params["delivery_id"]))
    if not emu.hooks.url:
        raise invalid("the App has no webhook URL", "Hook", "url", "missing_field")
    attempt = new_attempt(emu, old.guid, old.event, old.payload, redelivery=True)
    thread = threading.Thread(target=post, args=(emu.hooks, attempt), daemon=True,
                              name=f"emu-redeliver-{attempt.id}")
    emu.hooks.threads.append(thread)
    thread.start()
    return Reply(202, {})
