"""Helpers for the command and regeneration tests: the worked example in an emulator repository,
comment deliveries, branch and tree lookups."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from flagbot.bot.settings import Settings
from testing import example_upstream
from testing.github_emulator import Emulator, gitstore
from testing.github_emulator.state import EmuRepo
from tests.bot.handlers_support import bot_for

EXAMPLE = Path(__file__).resolve().parents[2] / "hardwares"


def example_pr(emu: Emulator, tmp: Path, name: str = "flagos/miniscale") -> tuple[EmuRepo, example_upstream.Example]:
    """The example upstream's main in a new repository and PR #1 adding the stored patches."""
    upstream = example_upstream.build(tmp / "miniscale")
    repo = emu.create_repo(name)
    subprocess.run(["git", "push", "-q", str(repo.bare_path), "main"], cwd=upstream.path,
                   check=True, capture_output=True)
    stored = {f"hardwares/{p.relative_to(EXAMPLE).as_posix()}": p.read_bytes()
              for p in sorted(EXAMPLE.rglob("*")) if p.is_file()}
    emu.push_commit(repo, branch="add-patches", files=stored)
    emu.open_pull(repo, head="add-patches")
    return repo, upstream


def comment(emu: Emulator, settings: Settings, repo: EmuRepo, body: str, *, number: int = 1,
            sender: str = "bob", delivery: str | None = None) -> dict[str, Any]:
    """Post `body` as `sender` on #number and run the handlers on its delivery."""
    payload = emu.payload(event="issue_comment", action="created", repo=repo, number=number,
                          sender=sender, body=body)
    return bot_for(settings).run(delivery or f"c-{payload['comment']['id']}", "issue_comment", payload)


def replies(emu: Emulator, repo: EmuRepo, number: int = 1) -> list[str]:
    """Bodies of the bot's comments on #number, oldest first."""
    return [c["body"] for c in emu.comments(repo, number) if c["user"]["login"] == emu.bot_login]


def branch(repo: EmuRepo, name: str) -> str | None:
    """The commit `name` points at in the emulator's repository."""
    return gitstore.rev_parse(repo.bare_path, f"refs/heads/{name}")


def tree_of(path: Path, rev: str) -> str:
    """The tree id of `rev` in the repository at `path`."""
    return gitstore.git(path, "rev-parse", f"{rev}^{{tree}}").decode().strip()


def show(repo: EmuRepo, rev: str, path: str) -> bytes | None:
    """File `path` at `rev`, or None."""
    out = gitstore.git(repo.bare_path, "cat-file", "blob", f"{rev}:{path}", check=False)
    return out or None
