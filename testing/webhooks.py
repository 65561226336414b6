"""Helpers to sign and send webhook deliveries the way GitHub does."""

from __future__ import annotations

import hashlib
import hmac
import uuid


def sign_body(body: bytes, secret: str) -> str:
    """The `X-Hub-Signature-256` value GitHub sends for `body`: `sha256=<HMAC-SHA256 hex>`."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def delivery_headers(event: str, body: bytes, secret: str, delivery: str | None = None) -> dict[str, str]:
    """Headers of a GitHub delivery of `body` for `event` (a fresh delivery GUID unless given)."""
    return {
        "Content-Type": "application/json",
        "User-Agent": "GitHub-Hookshot/emulated",
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
        "X-GitHub-Hook-ID": "100001",
        "X-GitHub-Hook-Installation-Target-Type": "integration",
        "X-Hub-Signature-256": sign_body(body, secret),
    }
