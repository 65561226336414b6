"""The dashboard store in Redis (with `FLAGBOT_REDIS_URL`), so any worker host records runs and
any web server shows them. Keys, all under `flagbot:dash:`: `run:<request>` (the run as JSON),
`runs` (requests by a growing sequence number), `runs:device:<device>` and `runs:repo:<owner/name>`
(the same, per filter), `repo-names` (how each repository is spelled), `heads` (requests per
head and device, for retries), `results` and
`results:<device>` (newest first, trimmed to the bound)."""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from typing import Any

import redis

from flagbot.bot.dashboard.store import MAX_RESULTS, MAX_RUNS, DeviceRun, KernelResult, RunFilter

PREFIX = "flagbot:dash:"
RUNS, SEQ, HEADS, RESULTS = PREFIX + "runs", PREFIX + "seq", PREFIX + "heads", PREFIX + "results"
NAMES = PREFIX + "repo-names"  # lower-cased repository -> as GitHub spells it


def run_key(request: str) -> str:
    return f"{PREFIX}run:{request}"


def device_key(device: str) -> str:
    return f"{RUNS}:device:{device}"


def repo_key(repo: str) -> str:
    return f"{RUNS}:repo:{repo.lower()}"


def head_of(run: DeviceRun) -> str:
    return f"{run.repo.lower()}#{run.pr}@{run.sha}/{run.device}"


class RedisDashStore:
    """Device runs and kernel results kept in Redis, the newest `MAX_*` of each."""

    def __init__(self, url: str) -> None:
        self.client = redis.Redis.from_url(url)

    def _get(self, request: str) -> DeviceRun | None:
        raw: bytes | None = self.client.get(run_key(request))  # type: ignore[assignment]
        return DeviceRun(**json.loads(raw)) if raw else None

    def run_started(self, run: DeviceRun) -> None:
        """Record a new request (a restarted request keeps its first record)."""
        if self._get(run.request) is not None:
            return
        retries = int(self.client.hincrby(HEADS, head_of(run), 1)) - 1
        seq = int(self.client.incr(SEQ))
        pipe = self.client.pipeline()
        pipe.set(run_key(run.request), json.dumps(asdict(replace(run, retries=retries))))
        for key in (RUNS, device_key(run.device), repo_key(run.repo)):
            pipe.zadd(key, {run.request: seq})
        pipe.hset(NAMES, run.repo.lower(), run.repo)
        pipe.execute()
        self._trim()

    def _trim(self) -> None:
        extra = int(self.client.zcard(RUNS)) - MAX_RUNS
        if extra <= 0:
            return
        old: list[bytes] = self.client.zrange(RUNS, 0, extra - 1)  # type: ignore[assignment]
        for raw in old:
            request = raw.decode()
            run = self._get(request)
            pipe = self.client.pipeline()
            pipe.zrem(RUNS, request)
            pipe.delete(run_key(request))
            if run is not None:
                pipe.zrem(device_key(run.device), request)
                pipe.zrem(repo_key(run.repo), request)
                pipe.hincrby(HEADS, head_of(run), -1)
            pipe.execute()
        self.client.eval("for _, k in ipairs(redis.call('HKEYS', KEYS[1])) do "
                         "if tonumber(redis.call('HGET', KEYS[1], k)) <= 0 then "
                         "redis.call('HDEL', KEYS[1], k) end end", 1, HEADS)

    def run_moved(self, request: str, *, status: str, at: float, conclusion: str | None = None,
                  run_id: int | None = None, url: str | None = None) -> None:
        """The request's run is now `status` (`in_progress` from `at`, or `completed` at `at`)."""
        run = self._get(request)
        if run is None:
            return
        run = replace(run, status=status, conclusion=conclusion or run.conclusion,
                      started_at=run.started_at or (at if status == "in_progress" else None),
                      finished_at=at if status == "completed" else run.finished_at,
                      run_id=run_id or run.run_id, url=url or run.url)
        self.client.set(run_key(request), json.dumps(asdict(run)))

    def add_results(self, results: list[KernelResult]) -> None:
        """Keep one report's per-op results."""
        pipe = self.client.pipeline()
        for r in results:
            raw = json.dumps(asdict(r))
            for key in (RESULTS, f"{RESULTS}:{r.device}"):
                pipe.lpush(key, raw)
                pipe.ltrim(key, 0, MAX_RESULTS - 1)
        pipe.execute()

    def runs(self, where: RunFilter, *, limit: int, offset: int = 0) -> list[DeviceRun]:
        """Runs newest first, filtered by device and repository."""
        key = device_key(where.device) if where.device else repo_key(where.repo) if where.repo else RUNS
        found: list[DeviceRun] = []
        start = 0
        skipped = 0
        while len(found) < limit:
            batch: list[bytes] = self.client.zrevrange(key, start, start + 199)  # type: ignore[assignment]
            if not batch:
                break
            start += len(batch)
            raws: list[Any] = self.client.mget([run_key(b.decode()) for b in batch])
            for raw in raws:
                if not raw:
                    continue
                run = DeviceRun(**json.loads(raw))
                if where.repo and run.repo.lower() != where.repo.lower():
                    continue
                if skipped < offset:
                    skipped += 1
                    continue
                found.append(run)
                if len(found) == limit:
                    break
        return found

    def run_facets(self) -> tuple[list[str], list[str]]:
        """The devices and repositories that have runs (for the filter)."""
        devices: set[str] = set()
        repos: set[str] = set()
        for raw in self.client.scan_iter(match=f"{RUNS}:*:*", count=500):
            kind, _, name = raw.decode()[len(RUNS) + 1:].partition(":")
            if not self.client.zcard(raw):
                continue
            if kind == "device":
                devices.add(name)
            else:
                spelled: bytes | None = self.client.hget(NAMES, name)  # type: ignore[assignment]
                repos.add(spelled.decode() if spelled else name)
        return sorted(devices), sorted(repos)

    def results(self, *, device: str | None = None, limit: int = 2_000) -> list[KernelResult]:
        """The newest `limit` results (of `device`), oldest first."""
        key = f"{RESULTS}:{device}" if device else RESULTS
        raws: list[bytes] = self.client.lrange(key, 0, limit - 1)  # type: ignore[assignment]
        return [KernelResult(**json.loads(raw)) for raw in reversed(raws)]
