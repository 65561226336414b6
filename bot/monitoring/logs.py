"""Server logs: text or one JSON object per line, with the delivery being handled, never a secret.

`delivery_context` marks the lines logged while a worker thread handles one delivery (delivery
id, event, repository, PR); `ContextFilter` copies those fields onto every record, so text and
JSON lines both carry them. `Redactor` runs on every record before it is written: it replaces the
configured secrets (webhook secrets, the App's private key) and anything shaped like a GitHub
token, a JWT, a PEM key or credentials in a URL, wherever they hide (message, arguments,
traceback).
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, Any

FORMATS = ("text", "json")
CONTEXT_FIELDS = ("delivery", "event", "repository", "pr")
# fields a caller may pass with `extra=` that JSON lines carry as they are
EXTRA_FIELDS = ("duration_s", "outcome", "attempt")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s%(context)s"
REDACTED = "[redacted]"

# GitHub tokens (ghs_ installation, ghp_ personal, gho_/ghu_/ghr_, github_pat_), JWTs, PEM blocks,
# and user:password@ in URLs (the x-access-token form git uses).
PATTERNS = [
    re.compile(r"\bgh[pousr]_[A-Za-z0-9_]{16,}"),
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"),
    re.compile(r"\beyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*"),
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.S),
    re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)"),
    re.compile(r"(?i)(?<=authorization: )(?:token|bearer|basic) \S+"),
]

_context: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
    "flagbot_delivery", default=None)


@contextmanager
def delivery_context(delivery: str, event: str, repository: str | None,
                     pr: int | None) -> Iterator[None]:
    """Tag every line logged inside the block (this thread) with the delivery's fields."""
    token = _context.set({"delivery": delivery, "event": event, "repository": repository, "pr": pr})
    try:
        yield
    finally:
        _context.reset(token)


def pr_number(payload: dict[str, Any]) -> int | None:
    """The PR (or issue) a payload is about, when it names one."""
    for key in ("pull_request", "issue"):
        obj = payload.get(key)
        if isinstance(obj, dict) and isinstance(obj.get("number"), int):
            return int(obj["number"])
    number = payload.get("number")
    return number if isinstance(number, int) else None


class Redactor(logging.Filter):
    """Replaces secrets in a record before any handler formats it."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        super().__init__()
        found: set[str] = set()
        for secret in secrets:
            if not secret:
                continue
            found.add(secret)
            # a PEM may also be logged line by line, or with its newlines escaped
            found.update(line for line in secret.splitlines() if len(line) >= 16)
            found.add(secret.replace("\n", "\\n"))
        self.secrets = sorted(found, key=len, reverse=True)

    def scrub(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        for pattern in PATTERNS:
            text = pattern.sub(REDACTED, text)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        record.msg, record.args = self.scrub(message), None
        if record.exc_text:
            record.exc_text = self.scrub(record.exc_text)
        record.exc_info = None  # formatted (and scrubbed) above; never formatted again raw
        return True


class ContextFilter(logging.Filter):
    """Copies the current delivery's fields onto the record (`record.context` for text lines)."""

    def filter(self, record: logging.LogRecord) -> bool:
        ctx = _context.get() or {}
        for name in CONTEXT_FIELDS:
            if not hasattr(record, name):
                setattr(record, name, ctx.get(name))
        parts = [f"{n}={getattr(record, n)}" for n in CONTEXT_FIELDS if getattr(record, n) is not None]
        record.context = f" [{' '.join(parts)}]" if parts else ""
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, delivery fields, extras."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in (*CONTEXT_FIELDS, *EXTRA_FIELDS):
            value = getattr(record, name, None)
            if value is not None:
                line[name] = value
        if record.exc_text:
            line["exception"] = record.exc_text
        return json.dumps(line, default=str)


if TYPE_CHECKING:
    _StreamHandler = logging.StreamHandler[IO[str]]
else:  # subscriptable at run time only from Python 3.11
    _StreamHandler = logging.StreamHandler


class StderrHandler(_StreamHandler):
    """A stream handler that writes to whatever `sys.stderr` is when a record is emitted, not
    the one there when the handler was made: a process that swaps stderr after setting up its
    logs (a daemon redirecting it, a test runner capturing each test apart) would otherwise
    have its worker threads write into a stream that has since been closed, and lose those
    records."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self) -> IO[str]:
        return sys.stderr

    @stream.setter
    def stream(self, _: IO[str]) -> None:
        pass  # always the current sys.stderr


def setup(level: str = "info", fmt: str = "text", secrets: Iterable[str | None] = (),
          stream: IO[str] | None = None) -> logging.Handler:
    """Send the root logger's records to `stream` (else the current stderr, looked up at each
    record) in `fmt`, redacted; returns the handler."""
    if fmt not in FORMATS:
        raise ValueError(f"log format {fmt!r}: expected one of {', '.join(FORMATS)}")
    handler: logging.Handler = (logging.StreamHandler(stream) if stream is not None
                                else StderrHandler())
    handler.addFilter(Redactor(secrets))
    handler.addFilter(ContextFilter())
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    for old in list(root.handlers):
        if getattr(old, "flagbot", False):
            root.removeHandler(old)
    handler.flagbot = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(getattr(logging, level.upper(), logging.INFO))
    return handler
