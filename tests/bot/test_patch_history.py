"""The bot keeps FlagScale's hardware/patch_history.yaml after merged vendor PRs (emulator)."""

from __future__ import annotations

import yaml

from flagbot.hooks.patches import perfile_history
from testing.github_emulator import Emulator
from tests.bot.commands_support import branch, show
from tests.bot.handlers_support import deliver, open_pr
from tests.bot.test_perfile_checks import flagscale, vendor_files
from tests.hooks import perfile_repo as pr

HISTORY = f"{pr.HW}/patch_history.yaml"
REAL_HISTORY = (pr.EXTRACT / HISTORY).read_text()


def merged_vendor_pr(emu: Emulator, config: str | None = None) -> tuple[object, int, str]:
    repo, base = flagscale(emu)
    main = {HISTORY: REAL_HISTORY}
    if config is not None:
        main[".github/flagbot.yml"] = config
    emu.push_commit(repo, branch="main", files=main, message="history and config")
    pull = open_pr(emu, repo, {k: v for k, v in vendor_files(base).items()
                               if k.startswith(pr.CAMBRICON)})
    merge = emu.merge_pull(repo, pull["number"])
    return repo, pull["number"], merge


def test_a_merged_vendor_pr_gets_its_history_update_proposed(emu: Emulator, settings) -> None:
    repo, number, merge = merged_vendor_pr(emu)
    result = deliver(emu, settings, repo, number, action="closed")
    assert result["patch_history"] == "proposed"
    head = branch(repo, f"flagbot/patch-history/{number}")
    text = show(repo, head, HISTORY).decode()
    # Cambricon_MLU/FlagScale's diff.yaml says task: train; the merge commit is appended
    assert yaml.safe_load(text)["Cambricon_MLU"]["train"]["FlagScale"][-1] == merge
    assert text == perfile_history.record(REAL_HISTORY, "Cambricon_MLU", ["train"],
                                          ["FlagScale"], merge)
    assert branch(repo, "main") == merge  # nothing pushed onto the default branch
    pulls = [c for c in emu.writes() if c.method == "POST" and c.path.endswith("/pulls")]
    assert [c.json["head"] for c in pulls] == [f"flagbot/patch-history/{number}"]
    again = deliver(emu, settings, repo, number, action="closed", delivery="d-2")
    assert again["pull"] == result["pull"] and again["commit"] == result["commit"]
    assert len([c for c in emu.writes() if c.method == "POST" and c.path.endswith("/pulls")]) == 1


def test_push_mode_puts_the_update_on_the_default_branch(emu: Emulator, settings) -> None:
    repo, number, merge = merged_vendor_pr(emu, "patch_history:\n  update: push\n")
    result = deliver(emu, settings, repo, number, action="closed")
    assert result["patch_history"] == "pushed"
    assert show(repo, "main", HISTORY).decode().count(merge) == 1
    pushed = branch(repo, "main")
    again = deliver(emu, settings, repo, number, action="closed", delivery="d-2")
    assert again["commit"] == result["commit"] == pushed == branch(repo, "main")
    assert not [c for c in emu.writes() if c.path.endswith("/pulls")]


def test_a_merged_pr_without_per_file_folders_changes_no_history(emu: Emulator, settings) -> None:
    repo, _ = flagscale(emu)
    pull = open_pr(emu, repo, {"flagscale/train/arguments.py": "# tuned\n"})
    emu.merge_pull(repo, pull["number"])
    result = deliver(emu, settings, repo, pull["number"], action="closed")
    assert "patch_history" not in result
    assert not [c for c in emu.writes() if c.path.endswith("/pulls")]


def test_merging_the_bots_own_history_pr_proposes_nothing_more(emu: Emulator, settings) -> None:
    repo, number, _ = merged_vendor_pr(emu)
    own = deliver(emu, settings, repo, number, action="closed")["pull"]
    emu.merge_pull(repo, own)
    result = deliver(emu, settings, repo, own, action="closed", delivery="d-2")
    assert "patch_history" not in result
    assert len([c for c in emu.writes() if c.method == "POST" and c.path.endswith("/pulls")]) == 1
