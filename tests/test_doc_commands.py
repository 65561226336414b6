"""Every shell block in README.md, docs/ and hardwares/README.md is exercised.

A block is marked on the line before its fence, in an HTML comment GitHub does not show:

- `<!-- runnable -->`: this test runs it with bash (`set -euo pipefail`) in a fresh copy of the
  repository (the files git tracks or would track, committed into a new repository, as a clone
  has them), with this environment's `flagbot` and `python` first on PATH and no GitHub or
  flagbot settings inherited;
- `<!-- exercised by: PATH [PATH ...] -->`: the block needs what a test cannot have here (a
  browser, GitHub, a long-running server, the network), and the named tests or `.ci/run` run
  the same commands; the paths must exist.

An unmarked block fails the test, so a new command in the docs cannot go untried.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["README.md", "hardwares/README.md", *sorted(
    p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md"))]
FENCE_RE = re.compile(r"^```(sh|bash|shell|console)\b[^\n]*$")
RUNNABLE = "<!-- runnable -->"
EXERCISED_RE = re.compile(r"^<!-- exercised by: (.+?) -->$")


class Block(NamedTuple):
    page: str
    line: int  # of the opening fence, 1-based
    marker: str
    text: str

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def shell_blocks(page: str) -> list[Block]:
    """The shell blocks of `page` with the marker line before each."""
    lines = (ROOT / page).read_text(encoding="utf-8").splitlines()
    blocks = []
    for i, line in enumerate(lines):
        if FENCE_RE.match(line):
            end = lines.index("```", i + 1)
            marker = lines[i - 1].strip() if i else ""
            blocks.append(Block(page, i + 1, marker, "\n".join(lines[i + 1:end])))
    return blocks


BLOCKS = [b for page in PAGES for b in shell_blocks(page)]
RUNNABLE_BLOCKS = [b for b in BLOCKS if b.marker == RUNNABLE]


def test_pages_have_runnable_blocks() -> None:
    assert len(RUNNABLE_BLOCKS) >= 5, [b.id for b in RUNNABLE_BLOCKS]


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: b.id)
def test_every_shell_block_is_marked(block: Block) -> None:
    if block.marker == RUNNABLE:
        return
    match = EXERCISED_RE.match(block.marker)
    assert match, (f"{block.id}: put {RUNNABLE} or <!-- exercised by: tests/... --> on the line "
                   "before the fence")
    for path in match.group(1).split():
        assert (ROOT / path).is_file(), f"{block.id}: {path} does not exist"


def fresh_copy(dest: Path) -> Path:
    """What a clone holds: the files git tracks or would track, committed in a new repository."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=True).stdout
    for rel in filter(None, listed.decode("utf-8", "surrogateescape").split("\0")):
        src = ROOT / rel
        if not os.path.lexists(src):
            continue  # deleted in the working tree, not yet in the index
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            target.symlink_to(os.readlink(src))
        else:
            shutil.copy2(src, target)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"],
                 ["-c", "commit.gpgsign=false", "commit", "-q", "-m", "fresh copy"]):
        subprocess.run(["git", *args], cwd=dest, check=True, env=clean_env(dest.parent))
    return dest


def clean_env(home: Path) -> dict[str, str]:
    """This environment's tools first on PATH; no GitHub or flagbot settings, a private HOME."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GITHUB_", "FLAGBOT_", "GIT_", "PROMETHEUS_"))
           and k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
               HOME=str(home), GIT_AUTHOR_NAME="docs", GIT_AUTHOR_EMAIL="docs@flagbot.invalid",
               GIT_COMMITTER_NAME="docs", GIT_COMMITTER_EMAIL="docs@flagbot.invalid",
               TRITON_INTERPRET="1")
    return env


@pytest.mark.slow
@pytest.mark.parametrize("block", RUNNABLE_BLOCKS, ids=lambda b: b.id)
def test_runnable_block_runs_in_a_fresh_copy(block: Block, tmp_path: Path) -> None:
    repo = fresh_copy(tmp_path / "flagbot")
    script = "set -euo pipefail\n" + block.text + "\n"
    done = subprocess.run(["bash", "-c", script], cwd=repo, env=clean_env(tmp_path),
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, (f"{block.id} exited {done.returncode}\n--- stdout\n"
                                  f"{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}")
