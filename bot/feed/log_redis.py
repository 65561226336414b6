"""The label log in Redis (with `FLAGBOT_REDIS_URL`), so workers on any host record and any web
server reads it. Keys: `flagbot:feed:pr:<repo>#<number>` (a hash: label -> the entry as JSON) and
`flagbot:feed:label:<label>` (the set of PRs ever recorded under that label), and per label and
state `flagbot:feed:by-time:<label>:<state>` (a sorted set of the PRs still carrying the label,
scored by when they last changed state), which listings page through instead of reading every
entry; names lower-cased. One repository's deliveries run one at a time (the repository lock),
so a PR's hash has one writer.
"""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from typing import Any

import redis

from flagbot.bot.feed.log import STATES, Closing, LabeledPR, after_closing, keep, newest_first

PREFIX = "flagbot:feed:"


def pr_key(repo: str, number: int) -> str:
    return f"{PREFIX}pr:{repo.lower()}#{number}"


def label_key(label: str) -> str:
    return f"{PREFIX}label:{label.lower()}"


def time_key(label: str, state: str) -> str:
    return f"{PREFIX}by-time:{label.lower()}:{state}"


# Entries a filtered listing (`repo=`) reads at most before it stops: a feed read is bounded
# whatever the log holds.
MAX_SCANNED = 20_000
BATCH = 500


def encode(entry: LabeledPR) -> str:
    return json.dumps(asdict(entry))


def decode(raw: bytes | str) -> LabeledPR:
    data: dict[str, Any] = json.loads(raw)
    data["paths"] = tuple(data.get("paths") or ())
    return LabeledPR(**data)


class RedisLabelLog:
    """The label log kept in Redis."""

    def __init__(self, url: str) -> None:
        self.client = redis.Redis.from_url(url)

    def _get(self, repo: str, number: int, label: str) -> LabeledPR | None:
        raw: bytes | None = self.client.hget(pr_key(repo, number), label.lower())  # type: ignore[assignment]
        return decode(raw) if raw else None

    def _put(self, entry: LabeledPR) -> None:
        member = f"{entry.repo.lower()}#{entry.number}"
        pipe = self.client.pipeline()
        pipe.hset(pr_key(entry.repo, entry.number), entry.label.lower(), encode(entry))
        pipe.sadd(label_key(entry.label), member)
        for state in STATES:
            pipe.zrem(time_key(entry.label, state), member)
        if entry.unlabeled_at is None:
            pipe.zadd(time_key(entry.label, entry.state), {member: entry.sort_time()})
        pipe.execute()

    def _index(self, label: str) -> None:
        """Build the by-time sets of a label recorded before they existed (once per label)."""
        done = f"{PREFIX}by-time-built:{label.lower()}"
        if self.client.exists(done):
            return
        members: set[bytes] = self.client.smembers(label_key(label))  # type: ignore[assignment]
        for member in sorted(members):
            repo_name, _, number = member.decode().rpartition("#")
            entry = self._get(repo_name, int(number), label)
            if entry is not None:
                self._put(entry)
        self.client.set(done, "1")

    def labeled(self, entry: LabeledPR) -> None:
        """Record (or refresh) that the PR carries `entry.label` for `entry.paths`."""
        old = self._get(entry.repo, entry.number, entry.label)
        if old is not None and old.unlabeled_at is None:
            entry = replace(entry, labeled_at=old.labeled_at)
        self._put(entry)

    def unlabeled(self, repo: str, number: int, label: str, at: float) -> None:
        """The PR lost `label`: drop it from every listing."""
        old = self._get(repo, number, label)
        if old is not None and old.unlabeled_at is None:
            self._put(replace(old, unlabeled_at=at))

    def closed(self, closing: Closing) -> None:
        """The PR was merged or closed: update each of its entries."""
        raw: dict[bytes, bytes] = self.client.hgetall(pr_key(closing.repo, closing.number))  # type: ignore[assignment]
        for value in raw.values():
            self._put(after_closing(decode(value), closing))

    def find(self, label: str, *, repo: str | None = None, since: float | None = None,
             state: str = "merged", limit: int | None = None) -> list[LabeledPR]:
        """Entries carrying `label` in `state` (or "all"), newest first."""
        self._index(label)
        states = STATES if state == "all" else (state,)
        found: list[LabeledPR] = []
        for one in states:
            found += self._page(label, one, repo=repo, since=since, limit=limit)
        return newest_first([e for e in found if keep(e, repo=repo, since=since, state=state)],
                            limit)

    def _page(self, label: str, state: str, *, repo: str | None, since: float | None,
              limit: int | None) -> list[LabeledPR]:
        """Newest first from one by-time set, until `limit` match or MAX_SCANNED were read."""
        found: list[LabeledPR] = []
        low = "-inf" if since is None else since
        for start in range(0, MAX_SCANNED, BATCH):
            members: list[bytes] = self.client.zrevrangebyscore(  # type: ignore[assignment]
                time_key(label, state), "+inf", low, start=start, num=BATCH)
            if not members:
                break
            pipe = self.client.pipeline()
            for member in members:
                repo_name, _, number = member.decode().rpartition("#")
                pipe.hget(pr_key(repo_name, int(number)), label.lower())
            found += [e for raw in pipe.execute() if raw
                      if keep(e := decode(raw), repo=repo, since=since, state=state)]
            if limit is not None and len(found) >= limit:
                break
        return found
