"""Fixtures of the handler tests: a running GitHub emulator, App settings for it, a repository.

Test modules that define their own `settings` or `emu` (the bot-core and emulator tests) override
these for themselves, as pytest does for module-level fixtures.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from flagbot.bot.settings import Settings
from testing.github_emulator import Emulator
from testing.github_emulator.state import EmuRepo
from tests.bot.handlers_support import BASE_FILES, REPO


@pytest.fixture
def emu(tmp_path: Path) -> Iterator[Emulator]:
    """A running GitHub emulator (each test's handlers mint their own tokens)."""
    with Emulator(tmp_path / "gh") as e:
        yield e


@pytest.fixture
def settings(emu: Emulator, tmp_path: Path) -> Settings:
    """Settings pointing the App at the emulator, writes unspaced so tests stay fast, and the
    slash-command rate limits out of the way (the tests of the limits set them)."""
    return Settings(app_id=emu.app_id, private_key=emu.private_key_pem, api_url=emu.url,
                    state_dir=tmp_path / "state", write_spacing_s=0.0,
                    commands_per_user=10_000, commands_per_pull=10_000,
                    outsider_commands_per_repo=10_000)


@pytest.fixture
def repo(emu: Emulator) -> EmuRepo:
    """The base repository with a small default branch."""
    return emu.create_repo(REPO, files=dict(BASE_FILES))
