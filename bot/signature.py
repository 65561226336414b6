"""Webhook signatures: GitHub's `X-Hub-Signature-256` (HMAC-SHA256 of the raw body, hex digest)."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable

PREFIX = "sha256="


def sign(body: bytes, secret: str) -> str:
    """Return the `X-Hub-Signature-256` value GitHub would send for `body` signed with `secret`."""
    digest = hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
    return PREFIX + digest


def verify(body: bytes, header: str | None, secrets: Iterable[str]) -> bool:
    """True when `header` is a valid signature of `body` under any of `secrets` (rotation)."""
    # a header is bytes on the wire; WSGI hands it over decoded as latin-1, so anything outside
    # ASCII (which compare_digest refuses with a TypeError) is simply not a hex digest
    if not header or not header.isascii() or not header.startswith(PREFIX):
        return False
    ok = False
    for secret in secrets:
        # every secret is compared, even after a match, so timing says nothing about which one fits
        ok |= hmac.compare_digest(sign(body, secret), header)
    return ok
