"""`flagbot labeled`: the PRs the bot labeled, from its label log (the feed's source), newest first."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from datetime import datetime, timezone

from flagbot.bot.feed.atom import iso, record
from flagbot.bot.feed.log import SELECTIONS
from flagbot.bot.settings import Settings
from flagbot.hooks.errors import UsageError


def since_epoch(text: str) -> float:
    """`2026-01-31`, `2026-01-31T12:00`, `...Z` or with an offset; a date without zone is UTC."""
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise UsageError(f"--since {text!r}: not a date", hint="e.g. --since 2026-01-31") from exc
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.timestamp()


def nothing_found(args: argparse.Namespace, settings: Settings) -> str:
    """Why the list is empty, on stderr: an empty answer and a wrong folder look alike otherwise."""
    where = ("the label log in Redis" if settings.redis_url
             else f"the label log {settings.feed_path}")
    if not settings.redis_url and not settings.feed_path.exists():
        return (f"flagbot labeled: no label log at {settings.feed_path}: nothing recorded there "
                "yet, or not the bot's state folder (set FLAGBOT_STATE_DIR to the folder "
                "`flagbot serve` uses, or run with -C in its working folder)")
    return f"flagbot labeled: no {args.state} PRs labeled {args.label!r} in {where}"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="flagbot labeled", description=(
        "List the pull requests flagbot labeled (merged ones by default), newest first, from the "
        "label log under FLAGBOT_STATE_DIR (or in Redis with FLAGBOT_REDIS_URL): the same entries "
        "as GET /feeds/<label>.atom."))
    p.add_argument("--label", required=True, help="label name, e.g. 'module: PrivateUse1'")
    p.add_argument("--repo", default=None, help="only this repository (owner/name)")
    p.add_argument("--since", default=None, help="only those merged (or closed, labeled) since this date")
    p.add_argument("--state", choices=SELECTIONS, default="merged",
                   help="merged (default), closed unmerged, still open, or all")
    p.add_argument("--limit", type=int, default=None, help="at most this many")
    p.add_argument("--json", action="store_true", help="a JSON list instead of text")
    return p


def main(argv: Sequence[str] | None = None, *, cwd: str | None = None) -> int:
    """Print the entries; exit 0 (an empty list is not an error)."""
    from flagbot.bot.entry.cli import load_settings
    from flagbot.bot.store.factory import open_label_log

    args = parser().parse_args(argv)
    since = since_epoch(args.since) if args.since else None
    settings = load_settings(cwd)
    if settings.redis_url:
        from flagbot.bot.store.redis_reach import require_redis

        require_redis(settings.redis_url)
    log = open_label_log(settings, create=False)
    entries = log.find(args.label, repo=args.repo, since=since, state=args.state, limit=args.limit)
    if not entries:
        print(nothing_found(args, settings), file=sys.stderr)
    if args.json:
        print(json.dumps([record(e) for e in entries], indent=2))
        return 0
    for e in entries:
        when = iso(e.sort_time())
        commit = (e.merge_commit or "")[:12] or e.state
        print(f"{when}  {e.repo}#{e.number}  {commit}  {e.title}\n  {e.url}")
        for path in e.paths:
            print(f"    {path}")
    return 0
