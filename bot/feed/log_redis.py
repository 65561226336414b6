"""The label log in Redis (with `FLAGBOT_REDIS_URL`), so workers on any host record and any web
server reads it. Keys: `flagbot:feed:pr:<repo>#<number>` (a hash: label -> the entry as JSON) and
`flagbot:feed:label:<label>` (the set of PRs ever recorded under that label); names lower-cased.
One repository's deliveries run one at a time (the repository lock), so a PR's hash has one writer.
"""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from typing import Any

import redis

from flagbot.bot.feed.log import Closing, LabeledPR, after_closing, keep, newest_first

PREFIX = "flagbot:feed:"


def pr_key(repo: str, number: int) -> str:
    return f"{PREFIX}pr:{repo.lower()}#{number}"


def label_key(label: str) -> str:
    return f"{PREFIX}label:{label.lower()}"


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
        pipe.execute()

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
        members: set[bytes] = self.client.smembers(label_key(label))  # type: ignore[assignment]
        pipe = self.client.pipeline()
        for member in sorted(members):
            repo_name, _, number = member.decode().rpartition("#")
            pipe.hget(pr_key(repo_name, int(number)), label.lower())
        found = [decode(raw) for raw in pipe.execute() if raw]
        return newest_first([e for e in found if keep(e, repo=repo, since=since, state=state)], limit)
