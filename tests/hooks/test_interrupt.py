"""Ctrl-C in the middle of the work: exit 130, repository untouched, no temporary leftovers."""

from __future__ import annotations

import os
import shutil
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


GIT = shutil.which("git")
# A `git` first on PATH that runs the real one, except at the Nth call of one subcommand: there
# it leaves a mark and blocks, so Ctrl-C lands mid-work however busy the machine is.
WRAPPER = """#!/bin/sh
skip=0
for a in "$@"; do
  if [ $skip = 1 ]; then skip=0; continue; fi
  case "$a" in
    -c|-C|--git-dir|--work-tree) skip=1 ;;
    -*) ;;
    *) sub="$a"; break ;;
  esac
done
if [ "$sub" = "{sub}" ]; then
  echo x >> "{count}"
  if [ "$(wc -l < "{count}")" -eq {nth} ]; then
    touch "{mark}"
    exec sleep 60
  fi
fi
exec "{git}" "$@"
"""


def interrupt_at(args: list[str], repo: Repo, tmp: Path, sub: str, nth: int,
                 watch: Path | None = None) -> tuple[int, list[str]]:
    """Run `flagbot args`, send Ctrl-C while the `nth` `git sub` is running.

    Returns the exit status and what `watch` (default: the temporary folder) held at that moment.
    """
    bindir = tmp / "bin"
    bindir.mkdir()
    mark, count = tmp / "blocked", tmp / "calls"
    (bindir / "git").write_text(WRAPPER.format(sub=sub, nth=nth, mark=mark, count=count, git=GIT))
    (bindir / "git").chmod(0o755)
    scratch = tmp / "scratch"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch), "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.Popen([sys.executable, "-m", "flagbot.hooks.cli", "-C", str(repo.path), *args],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not mark.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert mark.exists() and proc.poll() is None, (
        f"never reached git {sub} #{nth}: {proc.communicate()[1].decode(errors='replace')}")
    during = sorted(p.name for p in (watch or scratch).iterdir())
    proc.send_signal(signal.SIGINT)
    return proc.wait(timeout=30), during


def test_ctrl_c_during_patch_leaves_nothing_behind(long_series: Repo, tmp_path: Path) -> None:
    work = long_series.copy(tmp_path / "work")
    work.write("README.md", "dirty\n")
    snap = work.snapshot()
    # the second mail of the round trip: the scratch folder exists and work is half done
    rc, during = interrupt_at(["patch", "--device-type", "A_X100", "--base-commit-id", "base"],
                              work, tmp_path, "mailinfo", 2)
    assert rc == 130 and during, "interrupted before the scratch folder existed"
    assert work.snapshot() == snap
    assert list((tmp_path / "scratch").iterdir()) == []


def test_ctrl_c_during_unpatch_keeps_the_previous_build(long_series: Repo, tmp_path: Path) -> None:
    work = long_series.copy(tmp_path / "work")
    base8 = work.rev("base")[:8]
    make.make_patch(work.path, ["A_X100"], "base")
    unpatch(work.path, ["A_X100"], base8)
    args = ["unpatch", "--device-type", "A_X100", "--commit-id", base8]
    build = Repo(work.path / "build/A_X100" / work.path.name)
    head = build.rev("HEAD")
    # the new build is half made: two vendor commits of twelve written
    rc, during = interrupt_at(args, work, tmp_path, "commit-tree", 3,
                              watch=work.path / "build/A_X100")
    assert rc == 130 and len(during) == 2, f"no half-made build beside the old one: {during}"
    assert build.rev("HEAD") == head and build.git("status", "--porcelain") == ""
    assert [p.name for p in (work.path / "build/A_X100").iterdir()] == [work.path.name]
