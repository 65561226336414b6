"""The retry policy of every GitHub request: 5xx with back-off, rate limits by their headers.

`FlagbotRetry` overrides urllib3's public `Retry.is_retry` and `Retry.increment` (as PyGithub's
`GithubRetry` does); `increment` carries urllib3's underscore parameters `_pool` and
`_stacktrace`, so tests/bot/test_github.py pins both signatures and fails when they change.
"""

from __future__ import annotations

import inspect
import time
from typing import Any

from github import GithubRetry
from github.GithubException import RateLimitExceededExceedsMaxWait
from urllib3 import Retry

# GitHub's rate-limit guidance: obey retry-after; with no header, wait at least a minute.
SECONDARY_RATE_WAIT_S = 60.0
MAX_RATE_LIMIT_WAIT_S = 900.0
RETRY_TOTAL = 6


def _metrics() -> Any:
    # Imported late: bot.metrics belongs to the ingest side and pulls in prometheus_client.
    from flagbot.bot.monitoring import metrics

    return metrics


def retry_reason(status: int, headers: Any, message: str = "") -> str | None:
    """Why a response is retried: "5xx", "secondary_rate_limit", "primary_rate_limit" or None."""
    if 500 <= status <= 599:
        return "5xx"
    if status not in (403, 429):
        return None
    if headers.get("X-RateLimit-Remaining") == "0" and not headers.get("Retry-After"):
        return "primary_rate_limit"
    if headers.get("Retry-After") or "secondary rate limit" in message.lower():
        return "secondary_rate_limit"
    if message.lower().startswith("api rate limit exceeded"):
        return "primary_rate_limit"
    return None


class FlagbotRetry(GithubRetry):
    """GithubRetry that also counts every call and retry, and honours header-only primary limits."""

    def is_retry(self, method: str, status_code: int, has_retry_after: bool = False) -> bool:
        # urllib3 asks this once per response, retried or not: the one place that sees them all.
        _metrics().github_call(method, status_code)
        return bool(super().is_retry(method, status_code, has_retry_after))

    def increment(self, method: str | None = None, url: str | None = None,  # type: ignore[override]
                  response: Any = None, error: Exception | None = None,
                  _pool: Any = None, _stacktrace: Any = None) -> Retry:
        reason = retry_reason(response.status, response.headers) if response is not None else None
        if reason == "primary_rate_limit":
            retry = self._primary_limit(method, url, response, error, _pool, _stacktrace)
        else:
            retry = super().increment(method, url, response, error, _pool, _stacktrace)
        if response is not None and response.status in (403, 429) and reason is None:
            # GithubRetry only lets through 403s whose body names a rate limit; with no
            # x-ratelimit-remaining: 0 header that is the secondary one.
            reason = "secondary_rate_limit"
        if reason is not None:
            _metrics().github_retry(reason)
        return retry

    def _primary_limit(self, method: str | None, url: str | None, response: Any,
                       error: Exception | None, _pool: Any, _stacktrace: Any) -> Retry:
        # GitHub: "if x-ratelimit-remaining is 0, do not retry until after x-ratelimit-reset".
        reset = response.headers.get("X-RateLimit-Reset", "")
        wait = max(int(reset) - time.time(), 0.0) + 1.0 if str(reset).isdigit() else 60.0
        if self.max_rate_limit_wait is not None and wait > self.max_rate_limit_wait:
            raise RateLimitExceededExceedsMaxWait(response.status, None, dict(response.headers), wait=wait)
        retry = Retry.increment(self, method, url, response, error, _pool, _stacktrace)
        retry.get_backoff_time = lambda: wait  # type: ignore[method-assign]
        return retry


def make_retry(*, secondary_rate_wait: float = SECONDARY_RATE_WAIT_S,
               max_rate_limit_wait: float = MAX_RATE_LIMIT_WAIT_S) -> FlagbotRetry:
    """The retry policy for every request: 5xx with back-off, 403/429 rate limits by their headers."""
    extra: dict[str, Any] = {}
    if "retry_after_max" in inspect.signature(Retry.__init__).parameters:  # urllib3 >= 2.5
        extra["retry_after_max"] = int(MAX_RATE_LIMIT_WAIT_S)
    return FlagbotRetry(
        total=RETRY_TOTAL,
        backoff_factor=0.5,
        backoff_max=30,
        secondary_rate_wait=secondary_rate_wait,
        max_rate_limit_wait=max_rate_limit_wait,
        status_forcelist=[*range(500, 600), 429],
        # PATCH too: check-run and comment edits are idempotent, and 502s hit them as well
        allowed_methods=frozenset({"GET", "HEAD", "POST", "PATCH", "PUT", "DELETE"}),
        **extra,
    )
