"""The downstream feed: the label log (SQLite and Redis), the Atom feed and `flagbot labeled`."""

# ruff: noqa: F811  (fixtures imported from tests/bot/core_support.py, then used as arguments)

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import feedparser
import pytest

from flagbot.bot.entry.web import create_app
from flagbot.bot.feed.log import Closing, LabeledPR, LabelLog
from flagbot.bot.feed.log_redis import RedisLabelLog
from flagbot.bot.feed.log_sqlite import SqliteLabelLog
from flagbot.bot.settings import Settings
from flagbot.hooks import cli
from testing.github_emulator import Emulator
from testing.github_emulator.state import EmuRepo
from tests.bot.core_support import redis_server, redis_url  # noqa: F401  (fixtures)
from tests.bot.handlers_support import deliver, open_pr

PU1 = "module: PrivateUse1"
T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z
URL = "https://github.com/o/r/pull/"


@pytest.fixture(params=["sqlite", "redis"])
def log(request: pytest.FixtureRequest, tmp_path: Path) -> LabelLog:
    if request.param == "sqlite":
        return SqliteLabelLog(tmp_path / "feed.db")
    return RedisLabelLog(request.getfixturevalue("redis_url"))


def labeled(log: LabelLog, number: int, label: str = PU1, repo: str = "o/r", at: float = T0) -> None:
    log.labeled(LabeledPR(repo, number, label, f"PR {number}", f"{URL}{number}", (f"f{number}.h",),
                          "open", at))


def closing(number: int, at: float, merged: bool = True, labels: tuple[str, ...] = (PU1,),
            repo: str = "o/r") -> Closing:
    return Closing(repo, number, f"PR {number}", f"{URL}{number}", merged, at,
                   f"{number:040x}" if merged else None, labels)


def test_merged_prs_come_newest_first_with_commit_and_paths(log: LabelLog) -> None:
    for n, at in ((1, T0 + 10), (2, T0 + 30), (3, T0 + 20)):
        labeled(log, n)
        log.closed(closing(n, at))
    found = log.find(PU1)
    assert [e.number for e in found] == [2, 3, 1]
    assert found[0].merge_commit == f"{2:040x}" and found[0].paths == ("f2.h",)
    assert found[0].merged_at == T0 + 30 and found[0].state == "merged"


def test_open_closed_and_unlabeled_prs_are_not_in_the_merged_listing(log: LabelLog) -> None:
    for n in (1, 2, 3, 4):
        labeled(log, n)
    log.closed(closing(2, T0 + 5, merged=False))
    log.unlabeled("o/r", 3, PU1, T0 + 5)
    log.closed(closing(3, T0 + 6))
    log.closed(closing(4, T0 + 7, labels=("other",)))  # a person removed the label before merging
    assert log.find(PU1) == []
    assert [e.number for e in log.find(PU1, state="open")] == [1]
    assert [e.number for e in log.find(PU1, state="closed")] == [2]


def test_listing_filters_by_repository_time_and_label_case(log: LabelLog) -> None:
    labeled(log, 1, repo="o/r")
    labeled(log, 1, repo="o/other")
    log.closed(closing(1, T0 + 10, repo="o/r"))
    log.closed(closing(1, T0 + 99, repo="o/other"))
    assert [e.repo for e in log.find(PU1.upper())] == ["o/other", "o/r"]
    assert [e.repo for e in log.find(PU1, repo="O/R")] == ["o/r"]
    assert [e.repo for e in log.find(PU1, since=T0 + 50)] == ["o/other"]
    assert log.find("vendor: A_X100") == []


def test_relabeling_keeps_the_first_labeled_time(log: LabelLog) -> None:
    labeled(log, 1, at=T0)
    labeled(log, 1, at=T0 + 100)
    assert log.find(PU1, state="open")[0].labeled_at == T0


def test_a_missing_sqlite_log_reads_as_empty_and_is_not_created(tmp_path: Path) -> None:
    assert SqliteLabelLog(tmp_path / "feed.db", create=False).find(PU1) == []
    assert not (tmp_path / "feed.db").exists()


# -- from webhook deliveries to the feed ------------------------------------------------------------


def merge_and_deliver(emu: Emulator, settings: Settings, repo: EmuRepo, number: int, at: float,
                      merged: bool = True) -> dict[str, Any]:
    if merged:
        emu.merge_pull(repo, number, at=at)
    else:
        emu.close_pull(repo, number, at=at)
    return deliver(emu, settings, repo, number, "closed", delivery=f"close-{number}")


@pytest.fixture
def history(emu: Emulator, settings: Settings, repo: EmuRepo) -> dict[int, str]:
    """Four PRs through the bot: #1 and #2 merged (#2 later), #3 closed, #4 never labeled."""
    changes = {1: {"torch/csrc/acc/Module.cpp": "// v2\n"},
               2: {"torch/accelerator/__init__.py": "x = 1\n", "src/core.py": "x = 2\n"},
               3: {"torch/csrc/acc/Other.cpp": "// x\n"}, 4: {"src/core.py": "x = 3\n"}}
    shas: dict[int, str] = {}
    for n, files in changes.items():
        open_pr(emu, repo, files, branch=f"pr{n}")
        deliver(emu, settings, repo, n, delivery=f"open-{n}")
    merge_and_deliver(emu, settings, repo, 1, T0 + 60)
    merge_and_deliver(emu, settings, repo, 2, T0 + 120)
    merge_and_deliver(emu, settings, repo, 3, T0 + 180, merged=False)
    for n in (1, 2):
        shas[n] = emu.pull(repo, n)["merge_commit_sha"]
    return shas


def test_the_atom_feed_lists_merged_labeled_prs_newest_first(emu: Emulator, settings: Settings,
                                                             repo: EmuRepo, history: dict[int, str]) -> None:
    client = create_app(settings.with_overrides(webhook_secret="s")).test_client()
    reply = client.get("/feeds/module:%20PrivateUse1.atom")
    assert reply.status_code == 200 and reply.content_type.startswith("application/atom+xml")
    feed = feedparser.parse(reply.data)
    assert not feed.bozo, feed.bozo_exception
    assert feed.feed.title == "Merged pull requests labeled 'module: PrivateUse1'"
    assert [e.link for e in feed.entries] == [emu.pull(repo, n)["html_url"] for n in (2, 1)]
    first = feed.entries[0]
    assert first.title == f"{repo.full_name}#2: Update"
    assert first.updated == "2026-01-01T00:02:00Z"
    assert history[2] in first.content[0].value
    assert "torch/accelerator/__init__.py" in first.content[0].value
    assert "src/core.py" not in first.content[0].value  # only paths that matched the label's globs
    assert any(link.href.endswith("/commit/" + history[2]) for link in first.links)


def test_the_feed_for_another_repository_or_label_is_empty_and_still_valid(
        settings: Settings, history: dict[int, str]) -> None:
    client = create_app(settings).test_client()
    for url in ("/feeds/module:%20PrivateUse1.atom?repo=someone/else", "/feeds/nothing.atom"):
        feed = feedparser.parse(client.get(url).data)
        assert not feed.bozo and feed.entries == []
    assert client.get("/feeds/module:%20PrivateUse1.rss").status_code == 404
    assert client.get("/feeds/x.atom?repo=not-a-repo").status_code == 400


def test_flagbot_labeled_lists_the_same_as_json(monkeypatch: pytest.MonkeyPatch, settings: Settings,
                                                repo: EmuRepo, history: dict[int, str],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("FLAGBOT_STATE_DIR", str(settings.state_dir))
    monkeypatch.delenv("FLAGBOT_REDIS_URL", raising=False)
    assert cli.main(["labeled", "--label", PU1, "--repo", repo.full_name, "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert [(e["number"], e["merge_commit"]) for e in found] == [(2, history[2]), (1, history[1])]
    assert found[1]["paths"] == ["torch/csrc/acc/Module.cpp"] and found[1]["merged_at"] == "2026-01-01T00:01:00Z"
    assert cli.main(["labeled", "--label", PU1, "--since", "2026-01-01T00:01:30Z"]) == 0
    text = capsys.readouterr().out
    assert f"{repo.full_name}#2" in text and f"{repo.full_name}#1" not in text
    assert cli.main(["labeled", "--label", PU1, "--state", "closed", "--json"]) == 0
    assert [e["number"] for e in json.loads(capsys.readouterr().out)] == [3]


def test_flagbot_labeled_rejects_a_bad_date(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["labeled", "--label", PU1, "--since", "yesterday"]) == 2
    assert "--since 'yesterday': not a date" in capsys.readouterr().err


def test_flagbot_labeled_says_when_there_is_no_label_log(monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("FLAGBOT_STATE_DIR", str(tmp_path / "not-the-bots"))
    monkeypatch.delenv("FLAGBOT_REDIS_URL", raising=False)
    assert cli.main(["labeled", "--label", PU1]) == 0
    out = capsys.readouterr()
    assert out.out == "" and f"no label log at {tmp_path / 'not-the-bots'}" in out.err
    assert "FLAGBOT_STATE_DIR" in out.err


def test_flagbot_labeled_says_when_nothing_matches(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    SqliteLabelLog(tmp_path / "state" / "feed.db")
    monkeypatch.setenv("FLAGBOT_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("FLAGBOT_REDIS_URL", raising=False)
    assert cli.main(["labeled", "--label", "vendor: A_X100", "--json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out) == []
    assert "no merged PRs labeled 'vendor: A_X100'" in out.err
