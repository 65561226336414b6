"""Hostile pull requests against the real handlers and the GitHub emulator: a flood of
findings holds no repository lock while its writes are paced, label spam and unusable device
names become findings, and PR text cannot mention anyone."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from flagbot.bot.handlers import BotHandlers
from flagbot.bot.settings import Settings
from flagbot.bot.store.sqlite import SqliteLedger
from flagbot.bot.worker import Worker
from testing.github_emulator import Emulator
from testing.github_emulator.state import EmuRepo
from tests.bot.core_support import wait_for
from tests.bot.handlers_support import clean_backend, missing_patch_lines, open_pr


def enqueue(emu: Emulator, worker: Worker, repo: EmuRepo, pr: dict[str, Any], delivery: str) -> None:
    body = emu.payload(event="pull_request", action="opened", repo=repo, number=pr["number"])
    worker.ledger.record(delivery_id=delivery, event="pull_request", action="opened",
                         repo=repo.full_name, payload=json.dumps(body).encode(), wanted=True)
    worker.queue.enqueue(delivery)


def first_write_for(emu: Emulator, sha: str) -> float | None:
    times = [c.ts for c in emu.writes() if c.method == "POST" and "check-runs" in c.path
             and isinstance(c.json, dict) and c.json.get("head_sha") == sha]
    return min(times) if times else None


def test_an_innocent_pr_is_checked_while_a_hostile_one_is_still_writing(
        emu: Emulator, settings: Settings, tmp_path: Path) -> None:
    # one write per 1.5 s: the hostile PR's writes take several seconds
    settings = settings.with_overrides(write_spacing_s=1.5, write_burst=1)
    repo = emu.create_repo("flagos/FlagGems", files={"README.md": "x\n", **clean_backend()})
    hostile = open_pr(emu, repo, {"hardwares/hetero.txt": missing_patch_lines(5000)},
                      branch="hostile")
    innocent = open_pr(emu, repo, {"backends/_beta/ops/extra.py": "def extra():\n    pass\n"},
                       branch="innocent")
    worker = Worker(settings, BotHandlers(settings), threads=2)
    worker.start()
    try:
        enqueue(emu, worker, repo, hostile, "hostile")
        wait_for(lambda: first_write_for(emu, hostile["head"]["sha"]), 60, "the hostile PR's writes")
        enqueue(emu, worker, repo, innocent, "innocent")
        led = SqliteLedger(settings.ledger_path)
        wait_for(lambda: all(led.get(d).status == "done" for d in ("hostile", "innocent")), 120,
                 "both done")
    finally:
        worker.stop()
    hostile_last = max(c.ts for c in emu.writes() if f"/issues/{hostile['number']}/" in c.path
                       or (isinstance(c.json, dict) and c.json.get("head_sha") == hostile["head"]["sha"]))
    innocent_first = first_write_for(emu, innocent["head"]["sha"])
    assert innocent_first is not None and innocent_first < hostile_last, (innocent_first, hostile_last)


def test_the_workers_lock_is_the_pull_requests() -> None:
    from flagbot.bot.worker import lock_key

    assert lock_key("o/r", {"pull_request": {"number": 7}}) == "o/r#7"
    assert lock_key("o/r", {"number": 3}) == "o/r#3"
    assert lock_key("o/r", {"action": "created"}) == "o/r#events"


def mentions(markdown: str) -> list[str]:
    """`@name`s GitHub would turn into mentions: outside code spans, no word joiner after `@`."""
    outside = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", markdown, flags=re.S)
    return re.findall(r"@(?!\u2060)[A-Za-z0-9-]+", outside)


def test_names_from_the_pull_request_mention_no_one(emu: Emulator, settings: Settings) -> None:
    from tests.bot.handlers_support import BASE_FILES, deliver, runs_by_name

    repo = emu.create_repo("flagos/FlagScale", files=dict(BASE_FILES))
    pr = open_pr(emu, repo, {"hardwares/A_X100/x`y @octocat.md": "x\n",
                             "hardwares/A_X100/``@hubot``.md": "x\n",
                             "hardwares/hetero.txt": "00000001: A_X100\n"})
    deliver(emu, settings, repo, pr["number"])
    [comment] = emu.comments(repo, pr["number"])
    assert "octocat" in comment["body"] and mentions(comment["body"]) == []
    for run in runs_by_name(emu, repo, pr["head"]["sha"]).values():
        assert mentions(run["output"]["summary"] + (run["output"].get("text") or "")) == []


def test_code_spans_survive_backticks() -> None:
    from flagbot.bot.handlers.markdown import code, plain

    assert code("a`b") == "``a`b``" and code("`x`") == "`` `x` ``"
    assert mentions(code("@x ``@y``")) == [] and mentions(plain("@x `@y`")) == []
