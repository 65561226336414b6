"""The store in Redis, for `FLAGBOT_REDIS_URL` mode: every worker host reaches the ledger and queue.

Same rules as the SQLite ledger (the redelivery decision is `store.decide`); each state change is
a Lua script, so it is atomic across hosts. Keys: `flagbot:delivery:<id>` (a hash per row),
`flagbot:deliveries:queued` / `:running` (sorted by updated time / lease end, for the sweep) and
`flagbot:deliveries:counts` (rows per status, for /metrics).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

import redis
from huey import Huey, RedisHuey

from flagbot.bot.store import (
    BEACON_TTL_S,
    MAX_TRIES,
    RECENT_MAX,
    STATUSES,
    Delivery,
    Recorded,
    abandoned_error,
    decide,
    recorded_new,
)

PREFIX = "flagbot:"
QUEUED, RUNNING, COUNTS = (PREFIX + "deliveries:queued", PREFIX + "deliveries:running",
                           PREFIX + "deliveries:counts")
RECENT = PREFIX + "deliveries:recent"  # the newest RECENT_MAX ids by arrival, for the dashboard

# KEYS: row queued running counts recent; ARGV: id event action repo payload status now tries max
INSERT = """
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {'old', redis.call('HGET', KEYS[1], 'status'), redis.call('HGET', KEYS[1], 'lease_until') or ''}
end
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'event', ARGV[2], 'action', ARGV[3], 'repo', ARGV[4],
  'payload', ARGV[5], 'status', ARGV[6], 'attempts', 0, 'tries_left', ARGV[8],
  'received_at', ARGV[7], 'updated_at', ARGV[7], 'redeliveries', 0)
redis.call('HINCRBY', KEYS[4], ARGV[6], 1)
if ARGV[6] == 'queued' then redis.call('ZADD', KEYS[2], ARGV[7], ARGV[1]) end
redis.call('ZADD', KEYS[5], ARGV[7], ARGV[1])
redis.call('ZREMRANGEBYRANK', KEYS[5], 0, -tonumber(ARGV[9]) - 1)
return {'new', ARGV[6], ''}
"""
# KEYS: row queued running counts; ARGV: id expected_status now tries
REQUEUE = """
local st = redis.call('HGET', KEYS[1], 'status')
if st ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'status', 'queued', 'tries_left', ARGV[4], 'updated_at', ARGV[3],
  'owner', '', 'lease_until', '')
redis.call('HINCRBY', KEYS[1], 'redeliveries', 1)
redis.call('HINCRBY', KEYS[4], st, -1)
redis.call('HINCRBY', KEYS[4], 'queued', 1)
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return 1
"""
# KEYS: row queued running counts; ARGV: id owner now lease_until
CLAIM = """
local st = redis.call('HGET', KEYS[1], 'status')
if not st then return nil end
local lease = tonumber(redis.call('HGET', KEYS[1], 'lease_until')) or 0
local tries = tonumber(redis.call('HGET', KEYS[1], 'tries_left'))
if st ~= 'queued' and not (st == 'running' and lease < tonumber(ARGV[3]) and tries > 0) then
  return nil
end
if tries > 0 then tries = tries - 1 end
redis.call('HINCRBY', KEYS[1], 'attempts', 1)
redis.call('HSET', KEYS[1], 'status', 'running', 'tries_left', tries, 'owner', ARGV[2],
  'lease_until', ARGV[4], 'updated_at', ARGV[3])
redis.call('HINCRBY', KEYS[4], st, -1)
redis.call('HINCRBY', KEYS[4], 'running', 1)
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
return redis.call('HGETALL', KEYS[1])
"""
# KEYS: row queued running counts; ARGV: id owner status error updated_at finished_at result
SETTLE = """
if redis.call('HGET', KEYS[1], 'status') ~= 'running' then return 0 end
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[3], 'error', ARGV[4], 'updated_at', ARGV[5],
  'finished_at', ARGV[6], 'result', ARGV[7], 'lease_until', '')
redis.call('HINCRBY', KEYS[4], 'running', -1)
redis.call('HINCRBY', KEYS[4], ARGV[3], 1)
redis.call('ZREM', KEYS[3], ARGV[1])
if ARGV[3] == 'queued' then redis.call('ZADD', KEYS[2], ARGV[5], ARGV[1]) end
return 1
"""
# KEYS: running; ARGV: owner lease_until prefix id...
HEARTBEAT = """
for i = 4, #ARGV do
  local row = ARGV[3] .. ARGV[i]
  if redis.call('HGET', row, 'status') == 'running' and redis.call('HGET', row, 'owner') == ARGV[1] then
    redis.call('HSET', row, 'lease_until', ARGV[2])
    redis.call('ZADD', KEYS[1], ARGV[2], ARGV[i])
  end
end
return 1
"""
# KEYS: queued running; ARGV: now queued_before prefix
STALE = """
local out = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[1])) do
  if (tonumber(redis.call('HGET', ARGV[3] .. id, 'tries_left')) or 0) > 0 then
    table.insert(out, id)
  end
end
local old = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[2])
for _, id in ipairs(old) do
  redis.call('ZADD', KEYS[1], ARGV[1], id)
  redis.call('HSET', ARGV[3] .. id, 'updated_at', ARGV[1])
  table.insert(out, id)
end
return out
"""

# KEYS: running counts; ARGV: now prefix error ('{n}' = the try); returns [id, event, ...]
ABANDONED = """
local out = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1])) do
  local row = ARGV[2] .. id
  if redis.call('HGET', row, 'status') == 'running'
      and (tonumber(redis.call('HGET', row, 'tries_left')) or 0) <= 0 then
    local attempts = redis.call('HGET', row, 'attempts')
    redis.call('HSET', row, 'status', 'failed', 'updated_at', ARGV[1], 'finished_at', ARGV[1],
      'lease_until', '', 'error', (string.gsub(ARGV[3], '{n}', attempts)))
    redis.call('HINCRBY', KEYS[2], 'running', -1)
    redis.call('HINCRBY', KEYS[2], 'failed', 1)
    redis.call('ZREM', KEYS[1], id)
    table.insert(out, id)
    table.insert(out, redis.call('HGET', row, 'event'))
  end
end
return out
"""
# KEYS: row queued running counts; ARGV: id owner reason now
RELEASE = """
if redis.call('HGET', KEYS[1], 'status') ~= 'running' then return 0 end
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'status', 'queued', 'error', ARGV[3], 'updated_at', ARGV[4],
  'owner', '', 'lease_until', '')
redis.call('HINCRBY', KEYS[1], 'tries_left', 1)
redis.call('HINCRBY', KEYS[4], 'running', -1)
redis.call('HINCRBY', KEYS[4], 'queued', 1)
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
return 1
"""
BEACONS = PREFIX + "health:beacons"

FLOATS = ("received_at", "updated_at", "finished_at", "lease_until")
INTS = ("attempts", "tries_left", "redeliveries")
# a row's fields but its payload (listings never read payloads)
LISTED = ("id", "event", "action", "repo", "status", "error", "owner", "result", *FLOATS, *INTS)
LISTED_BYTES = tuple(name.encode() for name in LISTED)


def row_key(delivery_id: str) -> str:
    """The hash that holds one delivery."""
    return f"{PREFIX}delivery:{delivery_id}"


def to_delivery(flat: list[bytes]) -> Delivery:
    """Build a Delivery from HGETALL's flat [field, value, ...] reply ('' means none)."""
    raw = {flat[i].decode(): flat[i + 1] for i in range(0, len(flat), 2)}
    fields: dict[str, Any] = {}
    for name in ("id", "event", "action", "repo", "status", "error", "owner", "result"):
        text = raw.get(name, b"").decode()
        fields[name] = text or None
    for name in FLOATS:
        fields[name] = float(raw[name]) if raw.get(name) else None
    for name in INTS:
        fields[name] = int(raw.get(name) or 0)
    return Delivery(payload=raw.get("payload", b""), **fields)


class RedisLedger:
    """The ledger kept in Redis, shared by every `flagbot worker` host."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.client = redis.Redis.from_url(url)
        self._insert = self.client.register_script(INSERT)
        self._requeue = self.client.register_script(REQUEUE)
        self._claim = self.client.register_script(CLAIM)
        self._settle = self.client.register_script(SETTLE)
        self._heartbeat = self.client.register_script(HEARTBEAT)
        self._stale = self.client.register_script(STALE)
        self._abandoned = self.client.register_script(ABANDONED)
        self._release = self.client.register_script(RELEASE)

    def _keys(self, delivery_id: str) -> list[str]:
        return [row_key(delivery_id), QUEUED, RUNNING, COUNTS]

    def record(self, *, delivery_id: str, event: str, action: str | None, repo: str | None,
               payload: bytes, wanted: bool) -> Recorded:
        """Insert a new delivery, or apply the redelivery rules to a known one."""
        now = time.time()
        status = "queued" if wanted else "dropped"
        keys = self._keys(delivery_id)
        kind, old, lease = self._insert(keys=[*keys, RECENT], args=[
            delivery_id, event, action or "", repo or "", payload, status, repr(now), MAX_TRIES,
            RECENT_MAX])
        if kind == b"new":
            return recorded_new(status, wanted)
        verdict = decide(old.decode(), float(lease) if lease else None, now, wanted)
        if verdict.enqueue and not self._requeue(keys=keys, args=[
                delivery_id, old, repr(now), MAX_TRIES]):
            # another request changed the row between the two scripts: it decided for us
            return Recorded("running", False, "changed concurrently; not queued twice")
        return verdict

    def claim(self, delivery_id: str, owner: str, lease_s: float) -> Delivery | None:
        """Take a queued (or abandoned running) delivery for `owner`; None when not claimable."""
        now = time.time()
        flat = self._claim(keys=self._keys(delivery_id),
                           args=[delivery_id, owner, repr(now), repr(now + lease_s)])
        return to_delivery(flat) if flat else None

    def finish(self, delivery_id: str, owner: str, result: str) -> bool:
        """Mark done; False when `owner` no longer holds the row."""
        now = repr(time.time())
        return bool(self._settle(keys=self._keys(delivery_id),
                                 args=[delivery_id, owner, "done", "", now, now, result]))

    def fail(self, delivery_id: str, owner: str, error: str, *, retry_at: float | None) -> bool:
        """Record a failed try: queued again for `retry_at`, or failed until redelivered."""
        now = repr(time.time())
        if retry_at is not None:
            args = [delivery_id, owner, "queued", error, repr(retry_at), "", ""]
        else:
            args = [delivery_id, owner, "failed", error, now, now, ""]
        return bool(self._settle(keys=self._keys(delivery_id), args=args))

    def heartbeat(self, ids: Iterable[str], owner: str, lease_s: float) -> None:
        """Extend the lease of the rows `owner` is running."""
        ids = list(ids)
        if ids:
            self._heartbeat(keys=[RUNNING],
                            args=[owner, repr(time.time() + lease_s), PREFIX + "delivery:", *ids])

    def stale(self, *, queued_grace_s: float) -> list[str]:
        """Rows a worker must queue again: running with an expired lease, or queued too long."""
        now = time.time()
        found = self._stale(keys=[QUEUED, RUNNING],
                            args=[repr(now), repr(now - queued_grace_s), PREFIX + "delivery:"])
        return [i.decode() for i in found]

    def fail_abandoned(self) -> list[tuple[str, str]]:
        """Mark failed the rows whose worker died during their last try; (id, event) of each."""
        flat = self._abandoned(keys=[RUNNING, COUNTS],
                               args=[repr(time.time()), PREFIX + "delivery:", abandoned_error("{n}")])
        return [(flat[i].decode(), flat[i + 1].decode()) for i in range(0, len(flat), 2)]

    def get(self, delivery_id: str) -> Delivery | None:
        """The row for `delivery_id`, or None."""
        raw: dict[bytes, bytes] = self.client.hgetall(row_key(delivery_id))  # type: ignore[assignment]
        if not raw:
            return None
        return to_delivery([x for kv in raw.items() for x in kv])

    def counts(self) -> dict[str, int]:
        """Number of rows per status."""
        raw: dict[bytes, bytes] = self.client.hgetall(COUNTS)  # type: ignore[assignment]
        found = {k.decode(): int(v) for k, v in raw.items()}
        return {s: found.get(s, 0) for s in STATUSES}

    def check_writable(self) -> None:
        """Raise when Redis does not take a write."""
        self.client.set(PREFIX + "health:probe", repr(time.time()), ex=3600)

    def release(self, delivery_id: str, owner: str, reason: str) -> bool:
        """Put a running delivery back in the queue, its try not counted (a worker stopping)."""
        return bool(self._release(keys=self._keys(delivery_id),
                                  args=[delivery_id, owner, reason, repr(time.time())]))

    def beacon(self, name: str, at: float) -> None:
        """Record that worker `name` last made progress at `at` (read by /healthz)."""
        self.client.hset(BEACONS, name, repr(at))

    def beacons(self) -> dict[str, float]:
        """Each worker's last progress (beacons older than a day are dropped)."""
        raw: dict[bytes, bytes] = self.client.hgetall(BEACONS)  # type: ignore[assignment]
        found = {k.decode(): float(v) for k, v in raw.items()}
        old = [k for k, v in found.items() if v < time.time() - BEACON_TTL_S]
        if old:
            self.client.hdel(BEACONS, *old)
        return {k: v for k, v in found.items() if k not in old}


    def recent(self, *, limit: int, offset: int = 0) -> list[Delivery]:
        """Rows newest first, without their payloads (the dashboard's list)."""
        ids: list[bytes] = self.client.zrevrange(RECENT, offset, offset + limit - 1)  # type: ignore[assignment]
        pipe = self.client.pipeline()
        for i in ids:
            pipe.hmget(row_key(i.decode()), *LISTED)
        found = []
        for values in pipe.execute():
            if values[0] is None:
                continue  # gone since (a row expired by hand)
            found.append(to_delivery([x for name, value in zip(LISTED_BYTES, values, strict=True)
                                      for x in (name, value or b"")]))
        return found

    def oldest_waiting(self) -> float | None:
        """Since when the longest-waiting queued row has waited (None: nothing queued)."""
        first: list[tuple[bytes, float]] = self.client.zrange(QUEUED, 0, 0, withscores=True)  # type: ignore[assignment]
        return float(first[0][1]) if first else None


def queue_huey(name: str, url: str) -> Huey:
    """The Huey instance on Redis (a list per queue, blocking pops)."""
    return RedisHuey(name, url=url, results=False)
