"""Delivery reconciliation: what GitHub sent but the ledger lacks is asked for again.

GitHub does not retry a failed webhook delivery by itself, so every event of an hour the bot was
down is lost, and a power cut right after a 202 can lose the last SQLite commits (WAL,
`synchronous=NORMAL`) of deliveries GitHub logged as answered. GitHub keeps the App's delivery
log (`GET /app/hook/deliveries`, newest first, paged by cursor) and sends any logged delivery
again on request (`POST /app/hook/deliveries/{id}/attempts`), with the same `X-GitHub-Delivery`
guid, through the normal ingest (signature, ledger, idempotency).

A round reads the log back to the newest delivery an earlier round settled (kept in the store,
`store/chores.py`; on the first round, the last 24 hours) and asks for a redelivery of each guid
that the ledger lacks, or whose handlers failed here; never for a `ping`, a guid the ledger has
otherwise, one whose redelivery already reached the bot, or one asked for lately. At most
`reconcile_max` a round (the rest wait for the next), paced like every GitHub write. Rounds run
at the worker's start and every `FLAGBOT_RECONCILE_MINUTES`, one at a time across workers and
hosts (a named lock). Each request is noted beside the ledger (`Chores.notes`), counted in
/metrics (`flagbot_reconciled`) and logged.
"""

from __future__ import annotations

import argparse
import logging
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from github import GithubException

from flagbot.bot.locks import LockTimeout, RepoLocks
from flagbot.bot.monitoring import metrics
from flagbot.bot.settings import Settings
from flagbot.bot.store import Ledger
from flagbot.bot.store.chores import Chores, Reconciled

log = logging.getLogger(__name__)

MARK_KEY = "reconcile:mark"  # the id of the newest log entry every earlier one of which is settled
LAST_ROUND_KEY = "reconcile:last_round"
FLOOR_KEY = "reconcile:floor"  # epoch: entries older than the first round's look back
LOCK_NAME = "flagbot:reconcile"
FIRST_LOOK_BACK_S = 24 * 3600.0
# GitHub redelivers deliveries of the past 3 days only; older entries are not worth reading
REDELIVERABLE_S = 3 * 86400.0
# a guid asked for this recently is in flight: not asked for again (its attempt may not be
# logged yet)
ASKED_GRACE_S = 3600.0
# answers that say this delivery cannot be redelivered at all (as opposed to GitHub being down)
REFUSALS = (400, 404, 410, 422)
MAX_PAGES = 100  # 10,000 log entries a round at most (hostile or runaway logs stay bounded)
PER_PAGE = 100
_NEXT = re.compile(r'<([^>]+)>;\s*rel="next"')
_CURSOR = re.compile(r"[?&]cursor=([^&>]+)")


@dataclass(frozen=True)
class Attempt:
    """One entry of GitHub's delivery log (an attempt at delivering an event)."""

    id: int
    guid: str
    event: str
    action: str | None
    redelivery: bool
    status_code: int
    delivered_at: float

    @property
    def reached_us(self) -> bool:
        """The bot answered it with a success (2xx)."""
        return 200 <= self.status_code < 300


@dataclass
class Round:
    """What one round saw and did."""

    read: int = 0
    asked: list[Reconciled] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> count
    deferred: int = 0
    refused: int = 0
    newest: int = 0  # the newest log entry read
    held: set[int] = field(default_factory=set)  # first entries of guids to read again

    @property
    def mark(self) -> int | None:
        """The entry up to which everything is settled: short of the first guid still open
        (asked for, in flight or left over), so the next round reads it again."""
        return (min(self.held) - 1) if self.held else (self.newest or None)

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1
        metrics.reconciled(reason)

    def summary(self) -> str:
        skipped = ", ".join(f"{n} {why}" for why, n in sorted(self.skipped.items())) or "none"
        return (f"read {self.read} log entries; asked for {len(self.asked)} redeliveries; "
                f"deferred {self.deferred}; refused by GitHub {self.refused}; skipped: {skipped}")


class DeliveryLog(Protocol):
    """The App's delivery log on GitHub."""

    def page(self, cursor: str | None) -> tuple[list[dict[str, Any]], str | None]: ...
    def redeliver(self, hook_id: int) -> None: ...


def parse_time(text: str) -> float:
    """GitHub's `2026-11-26T03:00:00Z` as epoch seconds."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def to_attempt(item: dict[str, Any]) -> Attempt:
    """An Attempt from one list entry (GitHub's "simple webhook delivery")."""
    return Attempt(int(item["id"]), str(item["guid"]), str(item.get("event") or ""),
                   item.get("action"), bool(item.get("redelivery")),
                   int(item.get("status_code") or 0), parse_time(str(item["delivered_at"])))


def next_cursor(link: str | None) -> str | None:
    """The cursor of the `rel="next"` page in a Link header, or None on the last page."""
    found = _NEXT.search(link or "")
    cursor = _CURSOR.search(found.group(1)) if found else None
    return cursor.group(1) if cursor else None


def read_back(log_: DeliveryLog, mark: int | None, since: float) -> list[Attempt]:
    """Log entries newer than `mark` (all since `since` without one), oldest first."""
    out: list[Attempt] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        items, cursor = log_.page(cursor)
        done = not items
        for item in items:
            attempt = to_attempt(item)
            if (mark is not None and attempt.id <= mark) or attempt.delivered_at < since:
                done = True
                continue
            out.append(attempt)
        if done or cursor is None:
            break
    else:
        log.warning("reconcile: read %d pages of the delivery log; the rest waits for the next "
                    "round", MAX_PAGES)
    return sorted(out, key=lambda a: a.id)


def why_redeliver(attempts: Sequence[Attempt], ledger: Ledger, chores: Chores,
                  now: float) -> tuple[str, str]:
    """("redeliver", missing|failed) or ("skip", the reason) for one guid's log entries."""
    guid = attempts[0].guid
    if any(a.event == "ping" for a in attempts):
        return "skip", "ping"
    if any(a.redelivery and a.reached_us for a in attempts):
        return "skip", "redelivery_arrived"
    row = ledger.get(guid)
    if row is not None and row.status != "failed":
        return "skip", "known"
    asked = chores.noted(guid)
    if asked is not None and now - asked.requested_at < ASKED_GRACE_S:
        return "skip", "asked_lately"
    return "redeliver", "missing" if row is None else "failed"


def plan(attempts: Iterable[Attempt], ledger: Ledger, chores: Chores, limit: int,
         now: float) -> tuple[Round, list[tuple[list[Attempt], str]]]:
    """Decide every guid in the entries read (oldest first): (the round so far, the guids to
    ask for, each with its entries and reason), at most `limit` of them."""
    by_guid: dict[str, list[Attempt]] = {}
    for a in attempts:
        by_guid.setdefault(a.guid, []).append(a)
    result, todo = Round(), list[tuple[list[Attempt], str]]()
    for guid_attempts in sorted(by_guid.values(), key=lambda xs: xs[0].id):
        result.read += len(guid_attempts)
        result.newest = max(result.newest, guid_attempts[-1].id)
        verdict, reason = why_redeliver(guid_attempts, ledger, chores, now)
        if verdict == "skip":
            result.skip(reason)
            if reason == "asked_lately":  # in flight: if it fails again, a later round asks
                result.held.add(guid_attempts[0].id)
        elif len(todo) < limit:
            todo.append((guid_attempts, reason))
            result.held.add(guid_attempts[0].id)  # read again until its redelivery is logged
        else:
            result.deferred += 1
            result.held.add(guid_attempts[0].id)
    return result, todo


class GitHubDeliveryLog:
    """The delivery log over PyGithub, authenticated as the App (JWT)."""

    def __init__(self, settings: Settings) -> None:
        from github import Github

        from flagbot.bot.github.identity import AppCredentialsError, CachedAppAuth
        from flagbot.bot.github.retry import make_retry

        if not settings.app_id or not settings.private_key:
            raise AppCredentialsError("GITHUB_APP_ID and GITHUB_PRIVATE_KEY (or "
                                      "GITHUB_PRIVATE_KEY_PATH) must be set to read the App's "
                                      "delivery log")
        self._gh = Github(auth=CachedAppAuth(settings.app_id, settings.private_key),
                          base_url=settings.api_url, retry=make_retry(),
                          seconds_between_requests=None, seconds_between_writes=None)

    def page(self, cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
        params: dict[str, Any] = {"per_page": PER_PAGE}
        if cursor:
            params["cursor"] = cursor
        headers, data = self._gh.requester.requestJsonAndCheck(
            "GET", "/app/hook/deliveries", parameters=params)
        link = next((v for k, v in (headers or {}).items() if k.lower() == "link"), None)
        return list(data or []), next_cursor(link)

    def redeliver(self, hook_id: int) -> None:
        self._gh.requester.requestJsonAndCheck(
            "POST", f"/app/hook/deliveries/{int(hook_id)}/attempts")


class Reconciler:
    """Runs rounds against a DeliveryLog; `start` runs them on a timer in a daemon thread."""

    def __init__(self, settings: Settings, ledger: Ledger, chores: Chores,
                 delivery_log: DeliveryLog, pace: Callable[[], float] = lambda: 0.0,
                 clock: Callable[[], float] = time.time) -> None:
        self.settings = settings
        self.ledger = ledger
        self.chores = chores
        self.log = delivery_log
        self.pace = pace
        self.clock = clock
        self.locks = RepoLocks(settings)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def interval_s(self) -> float:
        return self.settings.reconcile_minutes * 60.0

    def round(self, *, dry_run: bool = False, force: bool = False) -> Round | None:
        """One round under the reconcile lock; None when another worker holds it or, unless
        `force` (`flagbot reconcile`), ran a round less than half an interval ago (several
        workers share one schedule)."""
        try:
            with self.locks.hold(LOCK_NAME, timeout_s=0.0):
                last = float(self.chores.get(LAST_ROUND_KEY) or 0)
                if not (dry_run or force) and self.clock() - last < self.interval_s / 2:
                    return None
                return self._round(dry_run)
        except LockTimeout:
            log.debug("reconcile: another worker runs this round")
            return None

    def _round(self, dry_run: bool) -> Round:
        now = self.clock()
        mark_text, floor_text = self.chores.get(MARK_KEY), self.chores.get(FLOOR_KEY)
        mark = int(mark_text) if mark_text else None
        floor = float(floor_text) if floor_text else now - FIRST_LOOK_BACK_S
        since = max(floor, now - REDELIVERABLE_S)
        attempts = read_back(self.log, mark, since)
        result, todo = plan(attempts, self.ledger, self.chores, self.settings.reconcile_max, now)
        for guid_attempts, reason in todo:
            attempt = guid_attempts[-1]
            entry = Reconciled(attempt.guid, attempt.id, attempt.event, attempt.action, reason,
                               self.clock())
            if not dry_run:
                self.pace()
                try:
                    self.log.redeliver(attempt.id)
                except GithubException as exc:
                    if exc.status not in REFUSALS:
                        raise  # GitHub trouble: the round stops, the next one tries again
                    # this delivery cannot be had again (too old, gone): it must not hold the
                    # mark, or every later round would ask for it first
                    result.refused += 1
                    result.held.discard(guid_attempts[0].id)
                    metrics.reconciled("refused")
                    log.warning("reconcile: GitHub refused to redeliver %s (log entry %d): %s %s",
                                attempt.guid, attempt.id, exc.status, exc.data)
                    continue
                self.chores.note(entry)
                metrics.reconciled(f"redelivered_{reason}")
                log.info("reconcile: asked GitHub to redeliver %s (%s%s, log entry %d): %s",
                         attempt.guid, attempt.event,
                         f".{attempt.action}" if attempt.action else "", attempt.id,
                         "the ledger lacks it" if reason == "missing" else "it failed here")
            result.asked.append(entry)
        if not dry_run:
            if floor_text is None:  # nothing older than the first round's look back, ever
                self.chores.put(FLOOR_KEY, repr(floor))
            if result.mark is not None and (mark is None or result.mark > mark):
                self.chores.put(MARK_KEY, str(result.mark))
            self.chores.put(LAST_ROUND_KEY, repr(self.clock()))
        log.info("reconcile: %s", result.summary())
        return result

    def _loop(self) -> None:
        while True:
            try:
                self.round()
            except Exception as exc:  # GitHub or the store may come back; try next interval
                log.warning("reconcile: round failed (%s: %s); next try in %.1f min",
                            type(exc).__name__, exc, self.settings.reconcile_minutes)
            if self._stop.wait(self.interval_s):
                return

    def start(self) -> None:
        """A round now, then one every interval, in a daemon thread."""
        self._thread = threading.Thread(target=self._loop, name="flagbot-reconcile", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)


def start_reconciler(settings: Settings, ledger: Ledger) -> Reconciler | None:
    """A started Reconciler for a worker, or None when reconciliation is off
    (`FLAGBOT_RECONCILE_MINUTES=0`) or the App's credentials are not set."""
    if settings.reconcile_minutes <= 0:
        log.info("reconcile: off (FLAGBOT_RECONCILE_MINUTES=0)")
        return None
    if not settings.app_id or not settings.private_key:
        log.warning("reconcile: off: GITHUB_APP_ID and GITHUB_PRIVATE_KEY are not set, so the "
                    "App's delivery log cannot be read; deliveries missed while the bot was "
                    "down are not asked for again")
        return None
    from flagbot.bot.github.pacing import WriteBucket
    from flagbot.bot.store.chores import open_chores

    bucket = WriteBucket(settings.write_burst, settings.write_spacing_s)
    reconciler = Reconciler(settings, ledger, open_chores(settings), GitHubDeliveryLog(settings),
                            pace=bucket.acquire)
    reconciler.start()
    return reconciler


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="flagbot reconcile", description=(
        "Run one delivery-log reconciliation round now, as the worker does at its start and "
        "every FLAGBOT_RECONCILE_MINUTES: ask GitHub to redeliver what the ledger lacks or what "
        "failed here. Uses the App's credentials, GITHUB_API_URL and the store "
        "(FLAGBOT_STATE_DIR or FLAGBOT_REDIS_URL) as `flagbot serve` does."))
    p.add_argument("--dry-run", action="store_true",
                   help="print the redeliveries it would ask for; ask for none, remember nothing")
    return p


def main(argv: Sequence[str] | None = None, *, cwd: str | None = None) -> int:
    """`flagbot reconcile`: exit 0 after a round (or when another worker is in one), 2 on errors."""
    from pathlib import Path

    from flagbot.bot.github.identity import AppCredentialsError
    from flagbot.bot.github.pacing import WriteBucket
    from flagbot.bot.store.chores import open_chores
    from flagbot.bot.store.factory import open_ledger
    from flagbot.hooks.errors import UsageError

    args = parser().parse_args(argv)
    settings = Settings.from_env()
    # a relative FLAGBOT_STATE_DIR is taken relative to `-C PATH`, as `flagbot serve` takes it
    settings = settings.with_overrides(
        state_dir=((Path(cwd) if cwd else Path.cwd()) / settings.state_dir).resolve())
    if settings.redis_url:  # the ledger and the round's lock live there
        from flagbot.bot.store.redis_reach import require_redis

        require_redis(settings.redis_url)
    try:
        delivery_log = GitHubDeliveryLog(settings)
    except AppCredentialsError as exc:
        raise UsageError(str(exc)) from exc
    bucket = WriteBucket(settings.write_burst, settings.write_spacing_s)
    reconciler = Reconciler(settings, open_ledger(settings), open_chores(settings), delivery_log,
                            pace=bucket.acquire)
    result = reconciler.round(dry_run=args.dry_run, force=True)
    if result is None:
        print("another worker is reconciling right now; nothing done")
        return 0
    verb = "would ask" if args.dry_run else "asked"
    for entry in result.asked:
        print(f"{verb} GitHub to redeliver {entry.guid} ({entry.event}"
              f"{'.' + entry.action if entry.action else ''}, log entry {entry.hook_id}): "
              f"{'the ledger lacks it' if entry.reason == 'missing' else 'it failed here'}")
    print(result.summary())
    return 0
