"""The page: reads the ledger, the queue, the dashboard store and the label log, renders HTML.

Every list is one page of a bounded query, so the page costs the same with ten or ten thousand
deliveries. Deliveries show the names GitHub and the ledger use (event, action, `owner/name`,
`#N`, the ledger state); payloads are never shown, only the PR number is read out of them.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Protocol

from jinja2 import Environment, PackageLoader, select_autoescape

from flagbot.bot.dashboard.charts import Point, Series, line_chart
from flagbot.bot.dashboard.store import DashStore, KernelResult, RunFilter
from flagbot.bot.devices.ids import Request
from flagbot.bot.feed.log import LabelLog
from flagbot.bot.store import Delivery, Ledger, Queue

DELIVERIES_PER_PAGE = 25
RUNS_PER_PAGE = 25
POINTS_PER_CHART = 30
MAX_CHARTS = 12  # (device, op) pairs per page; `?device=` narrows to one device's
TABLE_ROWS = 8
FEED_ENTRIES = 30
DEFAULT_LABEL = "module: PrivateUse1"
NAME_RE = re.compile(r"^[A-Za-z0-9_.:/ -]{1,100}$")


class Sources(Protocol):
    """Where the page reads from (the app's `Backend`)."""

    @property
    def ledger(self) -> Ledger: ...
    @property
    def queue(self) -> Queue: ...
    @property
    def label_log(self) -> LabelLog: ...


@dataclass(frozen=True)
class Query:
    """The page's parameters, checked: pages are numbers, filters are plain names."""

    page: int = 0
    runs_page: int = 0
    device: str | None = None
    repo: str | None = None
    label: str = DEFAULT_LABEL

    @classmethod
    def parse(cls, args: Mapping[str, str]) -> Query:
        def number(key: str) -> int:
            text = args.get(key, "0")
            return min(int(text), 10_000) if text.isdigit() else 0

        def name(key: str) -> str | None:
            text = (args.get(key) or "").strip()
            return text if NAME_RE.match(text) else None

        return cls(number("page"), number("runs_page"), name("device"), name("repo"),
                   name("label") or DEFAULT_LABEL)


def when(epoch: float | None) -> str:
    """UTC time as people read it (`2026-11-26 14:03:07`)."""
    if epoch is None:
        return "-"
    return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def span(seconds: float | None) -> str:
    """A duration (`850 ms`, `12.4 s`, `3 min`, `2.5 h`)."""
    if seconds is None or seconds < 0:
        return "-"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def pr_number(delivery: Delivery) -> int | None:
    """The PR (or issue) number a delivery is about, read from its payload (never shown)."""
    try:
        data = json.loads(delivery.payload) if delivery.payload else {}
    except ValueError:
        return None
    for key in ("pull_request", "issue"):
        obj = data.get(key)
        if isinstance(obj, dict) and isinstance(obj.get("number"), int):
            return int(obj["number"])
    run = data.get("workflow_run")
    if isinstance(run, dict):  # a device-check run names its request (and PR) in its title
        request = Request.from_title(str(run.get("display_title") or ""))
        return request.pr if request else None
    number = data.get("number")
    return number if isinstance(number, int) else None


def delivery_rows(ledger: Ledger, page: int) -> tuple[list[dict[str, Any]], bool]:
    """One page of deliveries, newest first, and whether another page follows."""
    rows = ledger.recent(limit=DELIVERIES_PER_PAGE + 1, offset=page * DELIVERIES_PER_PAGE)
    out = []
    for d in rows[:DELIVERIES_PER_PAGE]:
        full = ledger.get(d.id) if d.repo else None
        out.append({"id": d.id, "event": d.event, "action": d.action or "", "repo": d.repo or "",
                    "pr": pr_number(full) if full else None, "status": d.status,
                    "tries": d.attempts, "redeliveries": d.redeliveries,
                    "received": when(d.received_at),
                    "duration": span(d.finished_at - d.received_at if d.finished_at else None)})
    return out, len(rows) > DELIVERIES_PER_PAGE


def queue_facts(sources: Sources, now: float) -> dict[str, Any]:
    """Depth, the oldest waiting delivery's wait, each worker's last progress."""
    facts: dict[str, Any] = {}
    try:
        facts["depth"] = sources.queue.depth()
    except Exception as exc:
        facts["depth"] = f"unreachable ({type(exc).__name__})"
    oldest = sources.ledger.oldest_waiting()
    facts["oldest"] = span(now - oldest) if oldest is not None else "nothing waiting"
    facts["workers"] = [{"name": name, "ago": span(now - at)}
                        for name, at in sorted(sources.ledger.beacons().items(),
                                               key=lambda kv: -kv[1])][:10]
    facts["counts"] = sources.ledger.counts()
    return facts


def points(found: list[KernelResult], attr: str, scale: float = 1.0) -> list[Point]:
    """One chart point per result: `attr` scaled, labelled by PR, titled by PR and head."""
    out = []
    for r in found:
        value = getattr(r, attr)
        out.append(Point(None if value is None else value * scale, f"#{r.pr}",
                         f"{r.repo}#{r.pr} @ {r.sha[:7]}"))
    return out


def charts(results: list[KernelResult]) -> tuple[list[dict[str, Any]], int]:
    """Per (device, op): the speed-ratio and accuracy charts and the table of the last points;
    and how many pairs were left out (over `MAX_CHARTS`)."""
    grouped: dict[tuple[str, str], list[KernelResult]] = {}
    for r in results:
        grouped.setdefault((r.device, r.op), []).append(r)
    out = []
    for (device, op), found in sorted(grouped.items())[:MAX_CHARTS]:
        found = found[-POINTS_PER_CHART:]

        speed = [s for s in (Series("vs baseline", points(found, "vs_baseline")),
                             Series("vs native", points(found, "vs_native")))
                 if any(p.value is not None for p in s.points)]
        out.append({
            "device": device, "op": op,
            "speed": line_chart(speed, caption=f"{op} on {device}: speed ratio", unit="x",
                                reference=1.0) if speed else "",
            "accuracy": line_chart([Series("accuracy", points(found, "accuracy", 100.0))],
                                   caption=f"{op} on {device}: accuracy", unit="%",
                                   fixed=(0.0, 100.0), digits=0),
            "series": [s.name for s in speed],
            "rows": [{"repo": r.repo, "pr": r.pr, "sha": r.sha[:7], "kind": r.kind,
                      "verdict": r.verdict,
                      "baseline": "-" if r.vs_baseline is None else f"{r.vs_baseline:.2f}x",
                      "native": "-" if r.vs_native is None else f"{r.vs_native:.2f}x",
                      "accuracy": "-" if r.accuracy is None else f"{r.accuracy * 100:.1f}%",
                      } for r in reversed(found[-TABLE_ROWS:])],
        })
    return out, max(len(grouped) - MAX_CHARTS, 0)


def render(env: Environment, sources: Sources, store: DashStore, args: Mapping[str, str]) -> str:
    """The whole page for the request's arguments."""
    query = Query.parse(args)
    now = time.time()
    deliveries, more = delivery_rows(sources.ledger, query.page)
    where = RunFilter(query.device, query.repo)
    runs = store.runs(where, limit=RUNS_PER_PAGE + 1, offset=query.runs_page * RUNS_PER_PAGE)
    devices, repos = store.run_facets()
    feed = sources.label_log.find(query.label, state="all", limit=FEED_ENTRIES)
    drawn, left_out = charts([r for r in store.results(device=query.device)
                              if not query.repo or r.repo.lower() == query.repo.lower()])
    return env.get_template("dashboard.html").render(
        q=query, now=when(now), deliveries=deliveries, more_deliveries=more,
        queue=queue_facts(sources, now), runs=[run_row(r, now) for r in runs[:RUNS_PER_PAGE]],
        more_runs=len(runs) > RUNS_PER_PAGE, devices=devices, repos=repos,
        charts=drawn, charts_left_out=left_out,
        feed=[{"repo": e.repo, "number": e.number, "title": e.title, "url": safe_url(e.url),
               "state": e.state, "merge_commit": (e.merge_commit or "")[:7],
               "at": when(e.sort_time())} for e in feed])


def run_row(run: Any, now: float) -> dict[str, Any]:
    """A device run as the table shows it."""
    started = run.started_at
    end = run.finished_at or now
    return {"device": run.device, "repo": run.repo, "pr": run.pr, "sha": run.sha[:7],
            "status": run.status, "conclusion": run.conclusion or "",
            "queued": span((started or end) - run.queued_at),
            "running": span(end - started) if started else "-", "retries": run.retries,
            "url": safe_url(run.url), "at": when(run.queued_at)}


def safe_url(url: str | None) -> str | None:
    """Only http(s) links reach the page (a `javascript:` URL in a payload stays out)."""
    return url if url and url.startswith(("https://", "http://")) else None


def environment() -> Environment:
    """The page's template environment (autoescaped: every name is text)."""
    return Environment(loader=PackageLoader("flagbot.bot.dashboard", "templates"),
                       autoescape=select_autoescape(default=True), trim_blocks=True,
                       lstrip_blocks=True)
