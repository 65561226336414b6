"""A comment flood by people with read access costs other pull requests nothing: over the
per-user, per-PR and per-repository limits a comment gets no GitHub call at all. The
repository's owner, members and collaborators are not limited."""

from __future__ import annotations

import time

import pytest

from flagbot.bot.settings import Settings
from flagbot.bot.store.rates import RedisRates, SqliteRates
from tests.bot.commands_support import comment, replies
from tests.bot.core_support import redis_server, redis_url  # noqa: F401  (fixtures)
from tests.bot.devices_support import device_repo, open_device_pr

DEFAULTS = {"commands_per_user": Settings.commands_per_user,
            "commands_per_pull": Settings.commands_per_pull,
            "outsider_commands_per_repo": Settings.outsider_commands_per_repo}


def test_150_comments_from_readers_write_at_most_the_limits(emu, settings) -> None:
    settings = settings.with_overrides(**DEFAULTS)
    repo = device_repo(emu)
    open_device_pr(emu, repo, labels=())  # PR #1, the flood's target
    emu.push_commit(repo, branch="other", files={"docs.md": "x\n"})
    emu.open_pull(repo, head="other", user="alice")  # PR #2, another author's
    before = len(emu.writes())
    started = time.monotonic()
    results = [comment(emu, settings, repo, "/help", sender=f"reader{i % 15}")
               for i in range(150)]
    flood_writes = len(emu.writes()) - before
    limited = [r for r in results if r.get("rate_limited")]
    assert len(limited) == 150 - settings.commands_per_pull
    assert flood_writes <= 2 * settings.commands_per_pull  # an eyes reaction and a reply each
    calls = len(emu.calls)
    comment(emu, settings, repo, "/help", sender="reader99")  # over the limit: no call at all
    assert len(emu.calls) == calls
    # the other author's pull request is answered at once
    reply = comment(emu, settings, repo, "/help", number=2, sender="alice")
    assert reply.get("reply") == "created" and "/help" in replies(emu, repo, 2)[-1]
    assert time.monotonic() - started < 60


def test_one_reader_is_held_to_the_per_user_limit_across_pull_requests(emu, settings) -> None:
    settings = settings.with_overrides(**DEFAULTS)
    repo = device_repo(emu)
    open_device_pr(emu, repo, labels=())
    answered = [comment(emu, settings, repo, "/help", sender="bob") for _ in range(8)]
    assert sum(1 for r in answered if not r.get("rate_limited")) == settings.commands_per_user


def test_outsiders_share_a_repository_budget_collaborators_are_not_limited(emu, settings) -> None:
    settings = settings.with_overrides(outsider_commands_per_repo=3, commands_per_pull=100)
    repo = device_repo(emu)
    open_device_pr(emu, repo, labels=())
    readers = [comment(emu, settings, repo, "/help", sender=f"r{i}") for i in range(6)]
    assert [bool(r.get("rate_limited")) for r in readers] == [False] * 3 + [True] * 3
    writer = [comment(emu, settings, repo, "/help", sender="alice") for _ in range(12)]
    assert not any(r.get("rate_limited") for r in writer)


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
def test_the_window_slides(kind: str, tmp_path, request) -> None:
    rates = SqliteRates(tmp_path / "rates.db") if kind == "sqlite" else \
        RedisRates(request.getfixturevalue("redis_url"))
    key = f"k-{time.time_ns()}"
    assert [rates.hit(key, 2, 10.0, now=100.0 + i) for i in range(3)] == [True, True, False]
    assert rates.hit(key, 2, 10.0, now=110.5)  # the first hit left the window
    assert not rates.hit(key, 2, 10.0, now=111.0)


def test_an_outsiders_command_yields_while_the_write_pacing_is_short(emu, settings) -> None:
    from flagbot.bot.dispatch import BotHandlers
    from flagbot.bot.handlers.deferred import Deferred

    repo = device_repo(emu)
    open_device_pr(emu, repo, labels=())
    paced = settings.with_overrides(write_spacing_s=1.0, write_burst=4)
    bot = BotHandlers(paced)
    bucket = bot.github.bucket(emu.installation_id)
    for _ in range(4):  # another pull request just used the burst
        bucket.acquire()
    before = len(emu.writes())
    outsider = emu.payload(event="issue_comment", action="created", repo=repo, number=1,
                           sender="stranger", body="/help")
    with pytest.raises(Deferred):
        bot.run("c-outsider", "issue_comment", outsider)
    assert len(emu.writes()) == before  # nothing written while others need the slots
    insider = emu.payload(event="issue_comment", action="created", repo=repo, number=1,
                          sender="alice", body="/help")
    assert bot.run("c-alice", "issue_comment", insider)["reply"] == "created"
    # counted once, however often it is deferred
    assert bot.rates.hit(f"{repo.full_name.lower()}|user|stranger", 1, 600.0,
                         member=f"{outsider['comment']['id']}:x") is False


def test_a_write_bucket_says_what_it_can_spare() -> None:
    from flagbot.bot.github.pacing import WriteBucket

    now = [0.0]
    bucket = WriteBucket(4, 1.0, clock=lambda: now[0], sleep=lambda s: None)
    assert bucket.spare() == 4
    bucket.acquire()
    bucket.acquire()
    assert bucket.spare() == 2
    now[0] = 1.5
    assert bucket.spare() == 3.5 and bucket.spare() == 3.5  # looking takes nothing
