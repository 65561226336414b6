"""/unpatch is open to anyone who can comment: it reads only the asked base's patch, checks sizes
from git before reading anything, and says when a stored patch was edited by hand."""

from __future__ import annotations

import re
import subprocess
import time

from tests.bot.commands_support import branch, comment, example_pr, replies

HUGE = 70 * 1024 * 1024  # over the 64 MiB the bot builds from


def test_only_the_asked_base_is_read_and_huge_patches_are_refused_by_size(emu, settings,
                                                                          tmp_path) -> None:
    repo, upstream = example_pr(emu, tmp_path)
    filler = b"From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n" + \
        b"x" * HUGE
    emu.push_commit(repo, branch="add-patches",
                    files={"hardwares/A_X100/11111111/11111111.patch": filler,
                           **{f"hardwares/A_X100/{b8}/{b8}.patch": b"not a patch\n"
                              for b8 in ("00000000", "22222222")}})
    emu.update_pull_head(repo, 1)
    started = time.monotonic()
    result = comment(emu, settings, repo, f"/unpatch A_X100 {upstream.base[:8]}")
    assert result["commands"][0]["branches"] == [f"unpatch/A_X100/{upstream.base[:8]}"]
    assert branch(repo, f"unpatch/A_X100/{upstream.base[:8]}")
    assert time.monotonic() - started < 30
    comment(emu, settings, repo, "/unpatch A_X100 1111")
    reply = replies(emu, repo)[-1]
    assert "❌" in reply and "70 MiB, over the 64 MiB the bot builds from" in reply
    assert branch(repo, "unpatch/A_X100/11111111") is None
    scratch = list((tmp_path / "state").rglob("flagbot-scratch/*"))
    assert scratch == []  # nothing left behind


def test_a_hand_edited_stored_patch_is_built_with_a_warning(emu, settings, tmp_path) -> None:
    repo, upstream = example_pr(emu, tmp_path)
    b8 = upstream.base[:8]
    rel = f"hardwares/A_X100/{b8}/{b8}.patch"
    stored = subprocess.run(["git", "show", f"add-patches:{rel}"], cwd=repo.bare_path,
                            capture_output=True, check=True).stdout
    edited = re.sub(rb"\n\+(?!\+\+)([^\n]*)", rb"\n+\1 edited", stored, count=1)
    emu.push_commit(repo, branch="add-patches", files={rel: edited})
    emu.update_pull_head(repo, 1)
    result = comment(emu, settings, repo, f"/unpatch A_X100 {b8}")
    reply = replies(emu, repo)[-1]
    assert result["commands"][0].get("hand_edited") == [rel], reply
    assert "Edited by hand" in reply and "flagbot migrate" in reply
