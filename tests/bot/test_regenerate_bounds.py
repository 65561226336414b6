"""Regeneration of a stranger's pull request is bounded: the change's size is read from git
before anything is generated, the generation runs in the memory- and time-limited child, and
an unusable hardwares folder is a failed check run with the reason, never a crashed delivery."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.bot.commands_support import branch, replies
from tests.bot.handlers_support import deliver, runs_by_name

PATCHES = "flagbot / patches"


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


def push_tree(emu, repo, tmp: Path, change) -> str:
    """A commit on `feature` made by `change(work_tree)` in a real clone (symlinks included)."""
    work = tmp / "work"
    git("clone", "-q", str(repo.bare_path), str(work), cwd=tmp)
    git("switch", "-q", "-c", "feature", cwd=work)
    change(work)
    git("add", "-A", cwd=work)
    git("-c", "user.name=Mallory", "-c", "user.email=m@example.com", "commit", "-q", "-m",
        "[A_X100] adapt", cwd=work)
    git("push", "-q", "origin", "feature", cwd=work)
    return git("rev-parse", "HEAD", cwd=work).strip()


def test_a_symlinked_hardwares_folder_fails_the_patches_check_with_the_reason(
        emu, settings, repo, tmp_path) -> None:
    def change(work: Path) -> None:
        (work / "src").mkdir(exist_ok=True)
        (work / "src/core.py").write_text("x = 3\n")
        if (work / "hardwares").exists():
            shutil.rmtree(work / "hardwares")
        (work / "hardwares").symlink_to("/tmp")
    head = push_tree(emu, repo, tmp_path, change)
    emu.open_pull(repo, head="feature")
    emu.label_issue(repo, 1, "device: A_X100")
    result = deliver(emu, settings, repo, 1)
    assert result["regenerated"] == "failed" and branch(repo, "feature") == head
    check = runs_by_name(emu, repo, head)[PATCHES]
    assert check["conclusion"] == "failure"
    # the bot's checkouts keep links as plain files, so it is seen as a file; either way the
    # reason names the folder and how to fix it
    reason = check["output"]["summary"]
    assert "hardwares is a file, not a folder" in reason or "is a symbolic link" in reason
    assert "make hardwares a folder" in replies(emu, repo)[0]


def test_a_change_over_the_patch_limit_is_refused_before_anything_is_generated(
        emu, settings, repo, tmp_path) -> None:
    big = b"0123456789abcdef\n" * (70 * 1024 * 1024 // 17)

    def change(work: Path) -> None:
        (work / "src").mkdir(exist_ok=True)
        (work / "src/huge.txt").write_bytes(big)
    head = push_tree(emu, repo, tmp_path, change)
    emu.open_pull(repo, head="feature")
    emu.label_issue(repo, 1, "device: A_X100")
    result = deliver(emu, settings, repo, 1)
    assert result["regenerated"] == "failed" and branch(repo, "feature") == head
    summary = runs_by_name(emu, repo, head)[PATCHES]["output"]["summary"]
    assert "holds 69 MiB of file contents" in summary and "at most 64 MiB" in summary


def test_regeneration_out_of_memory_is_a_failed_check_not_a_dead_worker(
        emu, settings, repo, tmp_path) -> None:
    def change(work: Path) -> None:
        (work / "src").mkdir(exist_ok=True)
        for i in range(4):
            (work / f"src/part{i}.txt").write_bytes(f"line {i}\n".encode() * (1024 * 1024))
    head = push_tree(emu, repo, tmp_path, change)
    emu.open_pull(repo, head="feature")
    emu.label_issue(repo, 1, "device: A_X100")
    tight = settings.with_overrides(check_memory_mb=40)
    result = deliver(emu, tight, repo, 1)
    assert result["regenerated"] == "failed"
    summary = runs_by_name(emu, repo, head)[PATCHES]["output"]["summary"]
    assert "regeneration" in summary


def test_the_emulator_drops_patches_past_githubs_line_budget(emu, repo) -> None:
    import requests

    from tests.bot.test_emulator import token

    emu.push_commit(repo, branch="feature", files={"a.txt": "x\n" * 10, "b.txt": "y\n" * 25_000})
    emu.open_pull(repo, head="feature")
    files = requests.get(f"{emu.url}/repos/{repo.full_name}/pulls/1/files", timeout=10,
                         headers={"Authorization": f"token {token(emu)}"}).json()
    by_name = {f["filename"]: f for f in files}
    assert "patch" in by_name["a.txt"] and by_name["a.txt"]["additions"] == 10
    assert "patch" not in by_name["b.txt"] and by_name["b.txt"]["changes"] == 0
