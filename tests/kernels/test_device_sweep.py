"""benchmarks/device_sweep.sh, the wrapper that runs long sweeps (and ab_rows' comparisons) on
a lent machine across several cut-off commands: it never starts a second sweep over one that
is still running (two sweeps on one device spoil each other's timings, and the restart deleted
the running one's files), and `wait` without a sweep says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .benchmarks_support import BENCHMARKS

SCRIPT = BENCHMARKS / "device_sweep.sh"


def _run(args: list[str], work: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, SWEEP_DIR=str(work), OUT=str(work / "out"), WAIT="0",
               TRITON_CACHE_DIR=str(work / "triton"))
    return subprocess.run(["bash", str(SCRIPT), *args], env=env, capture_output=True,
                          text=True, timeout=60, check=False)


@pytest.mark.parametrize("start", [["start", "--ops", "add"], ["ab", "x.patch", "--ops", "mm"]])
def test_a_running_sweep_is_never_started_over(tmp_path: Path, start: list[str]) -> None:
    work = tmp_path / "sweep"
    work.mkdir()
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (work / "pid").write_text(f"{running.pid}\n")
        (work / "sweep.json").write_text("{}")  # the running sweep's results so far
        done = _run(start, work)
        assert done.returncode == 2
        assert "still running" in done.stderr and "wait" in done.stderr
        assert (work / "sweep.json").read_text() == "{}"  # its files left alone
        assert running.poll() is None
    finally:
        running.kill()
        running.wait()


def test_wait_without_a_sweep_says_so(tmp_path: Path) -> None:
    done = _run(["wait"], tmp_path / "none")
    assert done.returncode == 2 and "no sweep started" in done.stderr
    assert _run(["bogus"], tmp_path).returncode == 2


def test_wait_sends_ab_rounds_back_as_one_file_without_the_patched_tree(tmp_path: Path) -> None:
    import tarfile

    work = tmp_path / "sweep"
    (work / "ab" / "head" / "tree").mkdir(parents=True)
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True)
    (work / "pid").write_text(finished.stdout)  # a process that has ended: the sweep is over
    (work / "card.txt").write_text("0, H100\n")
    (work / "sweep.log").write_text("ab_rows: done\n")
    for name in ("base-0", "head-0", "base-1", "head-1", "ab"):
        (work / "ab" / f"{name}.json").write_text("{}")
    (work / "ab" / "head" / "tree" / "big.py").write_text("x" * 1000)
    (work / "ab" / "head2" / "tree").mkdir(parents=True)  # a second patch's tree
    (work / "ab" / "head2" / "tree" / "big.py").write_text("x" * 1000)
    (work / "ab" / "head2-0.json").write_text("{}")
    kernel = work / "triton" / "KEY"  # one compiled kernel in Triton's cache
    kernel.mkdir(parents=True)
    (kernel / "k.cubin").write_bytes(b"\x7fELF")
    (kernel / "__grp__k.json").write_text(json.dumps({"child_paths": {"k.cubin": str(
        kernel / "k.cubin")}}))
    done = _run(["wait"], work)
    assert done.returncode == 0 and "sweep ended" in done.stdout
    out = work / "out"
    assert {p.name for p in out.iterdir()} <= {"card.txt", "sweep.log", "ab.tgz", "parts.tgz",
                                               "triton-cache.tgz"}
    with tarfile.open(out / "triton-cache.tgz") as tar:
        assert sorted(tar.getnames()) == ["KEY/__grp__k.json", "KEY/k.cubin"]
    with tarfile.open(out / "ab.tgz") as tar:
        names = set(tar.getnames())
    assert {f"ab/{n}.json" for n in ("base-0", "head-0", "base-1", "head-1", "ab")} <= names
    assert "ab/head2-0.json" in names
    assert not any(n in ("ab/head", "ab/head2") or n.startswith(("ab/head/", "ab/head2/"))
                   for n in names)
