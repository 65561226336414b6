"""PR checks run in a limited child: memory, time and death become the delivery's failure,
recorded without retries, and the worker lives on to run the next delivery."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from flagbot.bot.dispatch import BotHandlers
from flagbot.bot.store.sqlite import SqliteLedger
from flagbot.bot.work import sandbox
from flagbot.bot.worker import Worker
from tests.bot.core_support import wait_for
from tests.bot.handlers_support import clean_backend, open_pr, runs_by_name


def hog(mb: int) -> int:
    return len(bytearray(mb * 1024 * 1024))


def nap(seconds: float) -> None:
    time.sleep(seconds)


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def fail() -> None:
    raise ValueError("a checker's own error")


def test_a_result_comes_back() -> None:
    assert sandbox.run_limited(hog, 10, memory_mb=512, timeout_s=30, what="t") == 10 * 1024 * 1024


def test_over_the_memory_limit_is_limit_exceeded() -> None:
    with pytest.raises(sandbox.LimitExceeded, match="256 MiB memory limit"):
        sandbox.run_limited(hog, 2048, memory_mb=256, timeout_s=30, what="t")


def test_over_the_time_limit_is_limit_exceeded_and_the_child_is_gone() -> None:
    started = time.monotonic()
    with pytest.raises(sandbox.LimitExceeded, match="time limit"):
        sandbox.run_limited(nap, 60, memory_mb=256, timeout_s=1, what="t")
    assert time.monotonic() - started < 10


def test_a_dead_child_is_limit_exceeded_naming_the_signal() -> None:
    with pytest.raises(sandbox.LimitExceeded, match="SIGKILL"):
        sandbox.run_limited(die, memory_mb=256, timeout_s=30, what="t")


def test_a_checkers_exception_comes_back_as_itself() -> None:
    with pytest.raises(ValueError, match="own error"):
        sandbox.run_limited(fail, memory_mb=256, timeout_s=30, what="t")


def test_a_check_over_its_limit_fails_its_delivery_once_and_the_next_delivery_runs(
        emu, settings, tmp_path: Path) -> None:
    # 1 MiB: the checks of any vendor folder need more (the innocent PR needs no checkout)
    settings = settings.with_overrides(check_memory_mb=1)
    repo = emu.create_repo("flagos/FlagGems", files={"README.md": "x\n", **clean_backend()})
    hostile = open_pr(emu, repo, {"backends/_beta/ops/extra.py": "def extra():\n    pass\n"},
                      branch="hostile")
    innocent = open_pr(emu, repo, {"README.md": "y\n"}, branch="innocent")
    worker = Worker(settings, BotHandlers(settings), threads=1, retry_delays_s=(0.05, 0.1))
    worker.start()
    try:
        for n, pr in (("h", hostile), ("i", innocent)):
            body = emu.payload(event="pull_request", action="opened", repo=repo, number=pr["number"])
            worker.ledger.record(delivery_id=n, event="pull_request", action="opened",
                                 repo=repo.full_name, payload=json.dumps(body).encode(),
                                 wanted=True)
            worker.queue.enqueue(n)
        led = SqliteLedger(settings.ledger_path)
        wait_for(lambda: all(led.get(n).status in ("done", "failed") for n in "hi"), 60, "both settled")
    finally:
        worker.stop()
    hostile_row, innocent_row = led.get("h"), led.get("i")
    assert hostile_row.status == "failed" and hostile_row.attempts == 1, hostile_row
    assert "memory limit" in hostile_row.error
    assert innocent_row.status == "done"
    assert runs_by_name(emu, repo, innocent["head"]["sha"])["flagbot / backends"]["conclusion"] == "success"
