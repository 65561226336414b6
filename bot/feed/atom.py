"""The downstream feed: merged PRs carrying a label, as Atom (RFC 4287) and as plain records.

`GET /feeds/<label>.atom[?repo=owner/name]` serves `atom(...)`; `flagbot labeled` prints
`records(...)`. Both read the label log (`feed/log.py`), newest merge first.
"""

from __future__ import annotations

import re
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from flagbot.bot.feed.log import LabeledPR, LabelLog

ATOM = "http://www.w3.org/2005/Atom"
DEFAULT_ENTRIES = 50
MAX_ENTRIES = 500
# Feed reads share the web process with webhook ingest: at most this many are rendered at once
# (others get 503 and Retry-After), and a rendered feed is reused for a few seconds, so readers
# polling a feed cannot take the threads GitHub's deliveries need.
MAX_CONCURRENT_READS = 2
CACHE_SECONDS = 5.0
CACHE_ENTRIES = 64
# Characters XML 1.0 allows (its `Char` production); anything else makes the document ill-formed.
NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def iso(epoch: float | None) -> str | None:
    """RFC 3339 in UTC (`2026-01-31T12:00:00Z`), as Atom dates and `--json` are written."""
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def commit_url(entry: LabeledPR) -> str | None:
    """The merge commit's page, next to the PR's (`.../pull/12` -> `.../commit/<sha>`)."""
    if not entry.merge_commit or "/pull/" not in entry.url:
        return None
    return entry.url.rsplit("/pull/", 1)[0] + "/commit/" + entry.merge_commit


def record(entry: LabeledPR) -> dict[str, Any]:
    """One entry as JSON (`flagbot labeled --json`)."""
    return {"repository": entry.repo, "number": entry.number, "label": entry.label,
            "title": entry.title, "url": entry.url, "state": entry.state,
            "merge_commit": entry.merge_commit, "merged_at": iso(entry.merged_at),
            "closed_at": iso(entry.closed_at), "labeled_at": iso(entry.labeled_at),
            "paths": list(entry.paths)}


def xml_text(text: str) -> str:
    """`text` without the characters XML 1.0 forbids (control characters, U+FFFE, U+FFFF,
    lone surrogates): a PR title or a file name holding one must not break the whole feed."""
    return NOT_XML.sub("\ufffd", text)


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    el = ET.SubElement(parent, f"{{{ATOM}}}{tag}", {k: xml_text(v) for k, v in attrs.items()})
    if text is not None:
        el.text = xml_text(text)
    return el


def summary(entry: LabeledPR) -> str:
    """The entry's text: the merge commit and the paths that earned the label."""
    lines = [f"{entry.repo}#{entry.number} merged as {entry.merge_commit or '(unknown commit)'} "
             f"at {iso(entry.merged_at)}.", f"Paths matching `{entry.label}`:"]
    lines += [f"  {path}" for path in entry.paths] or ["  (none recorded)"]
    return "\n".join(lines)


def atom(label: str, entries: Sequence[LabeledPR], *, self_url: str, repo: str | None = None) -> bytes:
    """The Atom document for `label` (and `repo`): one entry per merged PR, newest first."""
    ET.register_namespace("", ATOM)
    feed = ET.Element(f"{{{ATOM}}}feed")
    scope = f" in {repo}" if repo else ""
    _sub(feed, "id", self_url)
    _sub(feed, "title", f"Merged pull requests labeled {label!r}{scope}")
    _sub(feed, "subtitle", "Recorded by flagbot when it labeled them; newest merge first.")
    newest = max((e.merged_at or 0.0 for e in entries), default=0.0)
    _sub(feed, "updated", iso(newest))
    _sub(feed, "link", rel="self", href=self_url, type="application/atom+xml")
    _sub(_sub(feed, "author"), "name", "flagbot")
    _sub(feed, "generator", "flagbot")
    for e in entries:
        item = _sub(feed, "entry")
        # stable across re-merges of the feed: one PR is one entry
        _sub(item, "id", e.url or f"urn:flagbot:{e.repo}#{e.number}")
        _sub(item, "title", f"{e.repo}#{e.number}: {e.title}")
        _sub(item, "link", rel="alternate", href=e.url, type="text/html")
        if (commit := commit_url(e)) is not None:
            _sub(item, "link", rel="related", href=commit, title=f"merge commit {e.merge_commit}")
        _sub(item, "updated", iso(e.merged_at))
        _sub(item, "published", iso(e.merged_at))
        _sub(item, "category", term=e.label)
        _sub(item, "content", summary(e), type="text")
    body: bytes = ET.tostring(feed, encoding="utf-8", xml_declaration=False)
    return b'<?xml version="1.0" encoding="utf-8"?>\n' + body


REPO_RE = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


class Reads:
    """The feed route's bound on concurrent renders and its short-lived cache of results."""

    def __init__(self) -> None:
        self.slots = threading.BoundedSemaphore(MAX_CONCURRENT_READS)
        self.lock = threading.Lock()
        self.cache: dict[tuple[str, str | None, int, str], tuple[float, bytes]] = {}

    def cached(self, key: tuple[str, str | None, int, str]) -> bytes | None:
        with self.lock:
            hit = self.cache.get(key)
        return hit[1] if hit and time.monotonic() - hit[0] < CACHE_SECONDS else None

    def keep(self, key: tuple[str, str | None, int, str], body: bytes) -> None:
        with self.lock:
            if len(self.cache) >= CACHE_ENTRIES:
                self.cache.pop(min(self.cache, key=lambda k: self.cache[k][0]))
            self.cache[key] = (time.monotonic(), body)


READS = Reads()
BUSY = (503, b"feeds are busy; try again in a few seconds\n", "text/plain")


def serve(log: LabelLog, name: str, args: Mapping[str, str], url: str,
          reads: Reads = READS) -> tuple[int, bytes, str]:
    """GET /feeds/<name>: (status, body, content type) for `<label>.atom`, `?repo=`, `?limit=`."""
    if not name.endswith(".atom") or len(name) == len(".atom"):
        return 404, b"feeds are /feeds/<label>.atom\n", "text/plain"
    label = name[: -len(".atom")]
    repo = args.get("repo") or None
    if repo is not None and not REPO_RE.match(repo):
        return 400, f"repo={repo!r}: expected owner/name\n".encode(), "text/plain"
    try:
        limit = max(min(int(args.get("limit") or DEFAULT_ENTRIES), MAX_ENTRIES), 0)
    except ValueError:
        return 400, b"limit: expected a number\n", "text/plain"
    key = (label.lower(), repo.lower() if repo else None, limit, url)
    body = reads.cached(key)
    if body is None:
        if not reads.slots.acquire(blocking=False):
            return BUSY
        try:
            entries = log.find(label, repo=repo, state="merged", limit=limit)
            body = atom(label, entries, self_url=url, repo=repo)
        finally:
            reads.slots.release()
        reads.keep(key, body)
    return 200, body, "application/atom+xml; charset=utf-8"
