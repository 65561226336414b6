"""Hostile pull requests against the real handlers and the GitHub emulator: a flood of
findings holds no repository lock while its writes are paced, label spam and unusable device
names become findings, and PR text cannot mention anyone."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from flagbot.bot.dispatch import BotHandlers
from flagbot.bot.github.labels import LabelChange, add_wanted
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
    from flagbot.bot.github.markdown import code, plain

    assert code("a`b") == "``a`b``" and code("`x`") == "`` `x` ``"
    assert mentions(code("@x ``@y``")) == [] and mentions(plain("@x `@y`")) == []


def test_label_spam_creates_no_labels_and_each_folder_is_a_finding(emu: Emulator,
                                                                   settings: Settings) -> None:
    from tests.bot.handlers_support import BASE_FILES, deliver, runs_by_name

    repo = emu.create_repo("flagos/FlagScale", files=dict(BASE_FILES))
    pr = open_pr(emu, repo, {f"hardwares/SPAM_X{i}/x.md": "x\n" for i in range(61)})
    deliver(emu, settings, repo, pr["number"])
    assert not [n for n in emu.issue_labels(repo, pr["number"]) if n.startswith("vendor: ")]
    run = runs_by_name(emu, repo, pr["head"]["sha"])["flagbot / patches"]
    skipped = [a for a in run["output"]["annotations"] if a["title"] == "vendor-label"]
    assert len(skipped) == 61 and "a new vendor" in skipped[0]["message"]
    assert len(emu.comments(repo, pr["number"])) == 1


def test_stored_and_configured_devices_get_labels_up_to_the_cap(emu: Emulator,
                                                               settings: Settings) -> None:
    from tests.bot.handlers_support import BASE_FILES, deliver, runs_by_name

    stored = {f"hardwares/DEV_{c}/README.md": "x\n" for c in "ABCDEFGHIJK"}
    config = ".github/flagbot.yml", "devices:\n  NEW_Z:\n    runner: [self-hosted, new_z]\n"
    repo = emu.create_repo("flagos/FlagScale", files={**BASE_FILES, **stored, config[0]: config[1]})
    touched = {f"hardwares/DEV_{c}/x.md": "y\n" for c in "ABCDEFGHIJK"}
    pr = open_pr(emu, repo, {**touched, "hardwares/NEW_Z/x.md": "z\n"})
    deliver(emu, settings, repo, pr["number"])
    got = sorted(n for n in emu.issue_labels(repo, pr["number"]) if n.startswith("vendor: "))
    assert len(got) == settings.max_vendor_labels == 10
    run = runs_by_name(emu, repo, pr["head"]["sha"])["flagbot / patches"]
    capped = [a for a in run["output"]["annotations"] if a["title"] == "vendor-label"]
    assert len(capped) == 2 and all("10 vendor labels already" in a["message"] for a in capped)


def test_a_folder_name_too_long_for_a_label_is_a_finding_and_the_rest_is_written(
        emu: Emulator, settings: Settings) -> None:
    from tests.bot.handlers_support import BASE_FILES, deliver, runs_by_name

    long = "VENDOR_" + "X" * 53  # 60 characters: its label would be 68
    repo = emu.create_repo("flagos/FlagScale", files={**BASE_FILES, f"hardwares/{long}/a.md": "x\n",
                                                      "hardwares/OK_X1/a.md": "x\n"})
    pr = open_pr(emu, repo, {f"hardwares/{long}/b.md": "y\n", "hardwares/OK_X1/b.md": "y\n"})
    deliver(emu, settings, repo, pr["number"])
    assert emu.issue_labels(repo, pr["number"]) == ["vendor: OK_X1"]
    runs = runs_by_name(emu, repo, pr["head"]["sha"])
    assert sorted(runs) == ["flagbot / backends", "flagbot / patches"]
    [note] = [a for a in runs["flagbot / patches"]["output"]["annotations"]
              if a["title"] == "vendor-label"]
    assert "over GitHub's 50" in note["message"] and len(emu.comments(repo, pr["number"])) == 1


def test_a_label_github_refuses_does_not_cost_the_others(emu: Emulator, settings: Settings) -> None:
    from flagbot.bot.github import Label
    from tests.bot.handlers_support import BASE_FILES, bot_for

    repo = emu.create_repo("flagos/FlagScale", files=dict(BASE_FILES))
    pr = open_pr(emu, repo, {"x.md": "x\n"})
    client = bot_for(settings).github.repo_client(emu.installation_id, repo.full_name)
    bad, good = Label("x" * 60, "ffffff"), Label("vendor: OK_X1", "ffffff")
    add_wanted(client, pr["number"], LabelChange((bad, good), (bad.name, good.name),
                                                                (), (bad.name, good.name)))
    assert emu.issue_labels(repo, pr["number"]) == ["vendor: OK_X1"]
