"""Helpers for the handler tests (their fixtures `emu`, `settings`, `repo` are in conftest.py)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from flagbot.bot.dispatch import BotHandlers
from flagbot.bot.settings import Settings
from testing.bot_e2e import clean_backend, vendor_patch
from testing.github_emulator import Emulator
from testing.github_emulator.state import EmuRepo

REPO = "flagos/FlagScale"
BASE_FILES: dict[str, str | bytes] = {
    "README.md": "FlagScale\n",
    "torch/csrc/acc/Module.cpp": "// accelerator module\n",
    "src/core.py": "x = 1\n",
    # devices the default branch already has: their folders may become `vendor:` labels
    **{f"hardwares/{dev}/README.md": f"{dev}\n" for dev in ("A_X100", "B_Y100", "C_Z100")},
    **{f"backends/_{vendor}/README.md": f"{vendor}\n" for vendor in ("amd", "nvidia")},
}


def open_pr(emu: Emulator, repo: EmuRepo, files: dict[str, str | bytes], *, delete: list[str] | None = None,
            branch: str = "feature") -> dict[str, Any]:
    """Push `files` on `branch` and open a PR from it; returns the pull JSON."""
    emu.push_commit(repo, branch=branch, files=files, delete=delete or [], message="change")
    return emu.open_pull(repo, head=branch, base=repo.default_branch, user="alice")


@lru_cache(maxsize=4)
def bot_for(settings: Settings) -> BotHandlers:
    """The handlers of one test's settings, reused by its deliveries as one worker process does
    (one GitHubApp: the token minted for the first delivery serves the next)."""
    return BotHandlers(settings)


def deliver(emu: Emulator, settings: Settings, repo: EmuRepo, number: int, action: str = "opened",
            delivery: str = "d-1", **extra: Any) -> dict[str, Any]:
    """Build the payload for PR `number` and run the handlers on it, as the worker would."""
    payload = emu.payload(event="pull_request", action=action, repo=repo, number=number, **extra)
    return bot_for(settings).run(delivery, "pull_request", payload)


def runs_by_name(emu: Emulator, repo: EmuRepo, sha: str) -> dict[str, dict[str, Any]]:
    """The newest check run per name on `sha`."""
    return {r["name"]: r for r in emu.check_runs(repo, sha)}


def write_paths(emu: Emulator) -> list[str]:
    """Method + path of every write the bot made."""
    return [f"{c.method} {c.path}" for c in emu.writes()]


def missing_patch_lines(n: int, device: str = "A_X100") -> str:
    """A canonical hetero.txt of `n` bases whose patches do not exist (n findings, lines 1..n)."""
    return "".join(f"{i:08x}: {device}\n" for i in range(1, n + 1))


def make_patch(repo: EmuRepo, work: Path, device: str, files: dict[str, str]) -> tuple[str, bytes]:
    """A real vendor patch of `files` over the default branch head, made with `flagbot patch`."""
    return vendor_patch(repo, work, device, files)


__all__ = ["BASE_FILES", "REPO", "bot_for", "clean_backend", "deliver", "make_patch", "missing_patch_lines",
           "open_pr", "runs_by_name", "write_paths"]
