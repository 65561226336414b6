"""Ctrl-C in the middle of the work: exit 130, repository untouched, no temporary leftovers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flagbot.hooks.patches import make
from flagbot.hooks.patches.build import unpatch
from tests.hooks.conftest import MakeRepo, Repo

ROOT = Path(__file__).parents[2]


@pytest.fixture(scope="module")
def long_series(make_repo: MakeRepo) -> Repo:
    repo = make_repo("long")
    for i in range(40):
        repo.write(f"pkg/m{i}.py", f"x = {i}\n")
    repo.commit("base")
    repo.git("tag", "base")
    for i in range(12):
        repo.write(f"pkg/m{i}.py", f"x = {i}\ny = {i}\n")
        repo.write(f"pkg/n{i}.py", "new\n")
        repo.commit(f"vendor step {i}")
    return repo


def interrupt_when(args: list[str], repo: Repo, tmp: Path, appears: Path, pattern: str) -> int:
    env = {**os.environ, "TMPDIR": str(tmp)}
    proc = subprocess.Popen([sys.executable, "-m", "flagbot.hooks.cli", "-C", str(repo.path), *args],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    while not list(appears.glob(pattern)) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    assert proc.poll() is None, "finished before it could be interrupted"
    proc.send_signal(signal.SIGINT)  # at once: the work left after this point takes >100 ms
    return proc.wait(timeout=20)


def test_ctrl_c_during_patch_leaves_nothing_behind(long_series: Repo, tmp_path: Path) -> None:
    work = long_series.copy(tmp_path / "work")
    work.write("README.md", "dirty\n")
    snap = work.snapshot()
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    rc = interrupt_when(["patch", "--device-type", "A_X100", "--base-commit-id", "base"],
                        work, tmp, tmp, "flagbot-*")
    assert rc == 130
    assert work.snapshot() == snap
    assert list(tmp.iterdir()) == []


def test_ctrl_c_during_unpatch_keeps_the_previous_build(long_series: Repo, tmp_path: Path) -> None:
    work = long_series.copy(tmp_path / "work")
    base8 = work.rev("base")[:8]
    make.make_patch(work.path, ["A_X100"], "base")
    unpatch(work.path, ["A_X100"], base8)
    args = ["unpatch", "--device-type", "A_X100", "--commit-id", base8]
    build = Repo(work.path / "build/A_X100" / work.path.name)
    head = build.rev("HEAD")
    rc = interrupt_when(args, work, tmp_path, work.path / "build/A_X100", ".*flagbot-*")
    assert rc == 130
    assert build.rev("HEAD") == head and build.git("status", "--porcelain") == ""
    assert [p.name for p in (work.path / "build/A_X100").iterdir()] == [work.path.name]
