"""GitHub access: installation tokens cached, retries on 5xx and rate limits (counted), spaced writes."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

from github import GithubException
from prometheus_client import REGISTRY

from flagbot.bot.github.identity import GitHubApp
from tests.bot.handlers_support import bot_for, deliver, open_pr


def token_calls(emu) -> int:
    return sum(1 for c in emu.calls if c.method == "POST" and c.path.endswith("/access_tokens"))


def retries(reason: str) -> float:
    return REGISTRY.get_sample_value("flagbot_github_retries_total", {"reason": reason}) or 0.0


def calls(method: str, status: int) -> float:
    return REGISTRY.get_sample_value("flagbot_github_calls_total", {"method": method, "status": str(status)}) or 0.0


def test_installation_token_is_fetched_once_and_reused(emu, settings, repo) -> None:
    pr = open_pr(emu, repo, {"x.md": "x\n"})
    deliver(emu, settings, repo, pr["number"])
    deliver(emu, settings, repo, pr["number"], delivery="d-2")
    assert token_calls(emu) == 1


def test_token_near_expiry_is_refreshed(emu, settings) -> None:
    app = GitHubApp(settings)
    first = app.installation_token(emu.installation_id)
    app._tokens[emu.installation_id].expires_at = datetime.now(timezone.utc) + timedelta(minutes=2)
    assert app.installation_token(emu.installation_id) != first
    assert token_calls(emu) == 2


def test_revoked_token_is_replaced_and_the_delivery_still_runs(emu, settings, repo) -> None:
    pr = open_pr(emu, repo, {"hardwares/A_X100/x.md": "x\n"})
    bot_for(settings).github.installation_token(emu.installation_id)
    emu.expire_tokens()
    deliver(emu, settings, repo, pr["number"])
    assert emu.issue_labels(repo, pr["number"]) == ["vendor: A_X100"]


def test_bad_gateway_on_check_run_is_retried_and_counted(emu, settings, repo) -> None:
    pr = open_pr(emu, repo, {"x.md": "x\n"})
    before, before_calls = retries("5xx"), calls("POST", 502)
    emu.inject(method="POST", path=r"/repos/.+/check-runs", status=502, times=1)
    deliver(emu, settings, repo, pr["number"])
    assert len(emu.check_runs(repo, pr["head"]["sha"])) == 2
    assert retries("5xx") == before + 1
    assert calls("POST", 502) == before_calls + 1


def test_secondary_rate_limit_waits_retry_after_then_retries(emu, settings, repo) -> None:
    pr = open_pr(emu, repo, {"hardwares/A_X100/x.md": "x\n"})
    before = retries("secondary_rate_limit")
    emu.inject(method="GET", path=r"/repos/.+/pulls/\d+/files", status=403, times=1, headers={"Retry-After": "1"})
    started = time.monotonic()
    deliver(emu, settings, repo, pr["number"])
    files_calls = [c for c in emu.calls if c.path.endswith("/files")]
    assert [c.status for c in files_calls] == [403, 200]
    assert files_calls[1].ts - files_calls[0].ts >= 0.9
    assert time.monotonic() - started >= 1.0
    assert retries("secondary_rate_limit") == before + 1
    assert emu.issue_labels(repo, pr["number"]) == ["vendor: A_X100"]


def test_primary_rate_limit_waits_for_reset(emu, settings, repo) -> None:
    pr = open_pr(emu, repo, {"x.md": "x\n"})
    before = retries("primary_rate_limit")
    reset = str(int(time.time()) + 1)
    emu.inject(method="GET", path=r"/repos/.+/issues/\d+/comments", status=403, times=1,
               headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": reset})
    deliver(emu, settings, repo, pr["number"])
    assert retries("primary_rate_limit") == before + 1
    assert len(emu.comments(repo, pr["number"])) == 1


def test_forbidden_without_rate_limit_is_not_retried(emu, settings, repo) -> None:
    pr = open_pr(emu, repo, {"x.md": "x\n"})
    emu.inject(method="GET", path=r"/repos/.+/pulls/\d+/files", status=403, times=1,
               body={"message": "Resource not accessible by integration"})
    try:
        deliver(emu, settings, repo, pr["number"])
    except GithubException as exc:
        assert exc.status == 403
    else:
        raise AssertionError("a plain 403 must fail the delivery")
    assert sum(1 for c in emu.calls if c.path.endswith("/files")) == 1


def test_writes_are_spaced(emu, settings, repo) -> None:
    pr = open_pr(emu, repo, {"hardwares/A_X100/x.md": "x\n"})
    deliver(emu, settings.with_overrides(write_spacing_s=0.2, write_burst=1), repo, pr["number"])
    stamps = [c.ts for c in emu.writes()]
    assert len(stamps) >= 4
    assert min(b - a for a, b in zip(stamps, stamps[1:], strict=False)) >= 0.18


def test_one_prs_writes_go_out_in_a_burst_at_the_production_spacing(emu, settings, repo) -> None:
    pr = open_pr(emu, repo, {"hardwares/A_X100/x.md": "x\n"})
    deliver(emu, settings.with_overrides(write_spacing_s=1.0, write_burst=10), repo, pr["number"])
    stamps = [c.ts for c in emu.writes()]
    assert 4 <= len(stamps) <= 10
    assert stamps[-1] - stamps[0] < 1.0  # a fixed 1 s gap would take len(stamps) - 1 seconds


def test_every_call_goes_to_the_configured_api_url(emu, settings, repo) -> None:
    pr = open_pr(emu, repo, {"x.md": "x\n"})
    deliver(emu, settings, repo, pr["number"])
    # the only miss is the optional config file: no unknown route was called
    assert [c.path for c in emu.calls if c.status >= 400] == ["/repos/flagos/FlagScale/contents/.github/flagbot.yml"]


def test_client_edits_a_comment_it_has_not_listed(emu, settings, repo) -> None:
    open_pr(emu, repo, {"x.md": "x\n"})
    app = GitHubApp(settings)
    cid = app.repo_client(emu.installation_id, repo.full_name).create_comment(1, "first")
    fresh = app.repo_client(emu.installation_id, repo.full_name)
    emu.reset_calls()
    fresh.edit_comment(cid, "second")
    assert [c["body"] for c in emu.comments(repo, 1)] == ["second"]
    assert [c.method for c in emu.calls] == ["PATCH"]


def test_the_retry_policy_still_matches_the_urllib3_it_overrides() -> None:
    """FlagbotRetry overrides `increment` with urllib3's underscore parameters and `is_retry`:
    fail when urllib3 or PyGithub change their shape."""
    import inspect

    from github import GithubRetry
    from urllib3 import Retry

    increment = ["self", "method", "url", "response", "error", "_pool", "_stacktrace"]
    assert list(inspect.signature(Retry.increment).parameters) == increment
    assert list(inspect.signature(GithubRetry.increment).parameters) == increment
    assert list(inspect.signature(Retry.is_retry).parameters) == [
        "self", "method", "status_code", "has_retry_after"]
    assert list(inspect.signature(Retry.get_backoff_time).parameters) == ["self"]
