"""The device-name rule: one name per device, compared without case; its backend folder is the
name in lower case; a second spelling of a stored device is an error naming the stored one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flagbot.hooks import cli
from flagbot.hooks.backend.vendor import FOLDER_RE
from flagbot.hooks.patches.devices import backend_folder_name, label_spelling
from tests.hooks.conftest import Repo

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def stored(vendor_repo: Repo, tmp_path: Path) -> Repo:
    work = vendor_repo.copy(tmp_path / "work")
    assert cli.main(["-C", str(work.path), "patch", "--device-type", "A_X100",
                     "--base-commit-id", "base"]) == 0
    return work


def test_a_device_s_backend_folder_is_its_name_in_lower_case() -> None:
    assert backend_folder_name("A_X100") == "_a_x100"
    assert FOLDER_RE.match(backend_folder_name("Cambricon_MLU370"))  # check-backend accepts it


def test_the_label_spells_a_device_as_hardwares_does() -> None:
    assert label_spelling("a_x100", {"A_X100", "nvidia"}) == "A_X100"
    assert label_spelling("nvidia", {"A_X100", "nvidia"}) == "nvidia"


@pytest.mark.parametrize("command", [
    ["patch", "--device-type", "a_x100", "--base-commit-id", "base"],
    ["unpatch", "--device-type", "a_X100", "--commit-id", "base"],
])
def test_another_spelling_of_a_stored_device_is_an_error_naming_it(
        stored: Repo, command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    if command[0] == "unpatch":
        command[-1] = stored.rev("base")[:8]
    before = sorted(p.name for p in (stored.path / "hardwares").iterdir())
    assert cli.main(["-C", str(stored.path), *command]) == 2
    err = capsys.readouterr().err
    assert f"{command[2]!r} differs only in case from the existing device 'A_X100'" in err
    assert "use --device-type A_X100" in err
    assert sorted(p.name for p in (stored.path / "hardwares").iterdir()) == before
    assert not (stored.path / "build").exists()


def test_one_device_twice_in_two_spellings_is_refused(stored: Repo,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["-C", str(stored.path), "patch", "--device-type", "A_X100", "a_x100",
                     "--base-commit-id", "base"]) == 2
    assert "given twice" in capsys.readouterr().err


def test_check_backend_names_the_lower_case_folder_for_an_upper_case_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(ROOT / "backends/_template", tmp_path / "backends/_A_X100")
    assert cli.main(["-C", str(tmp_path), "check-backend", "backends/_A_X100"]) == 1
    assert "rename it to '_a_x100' (the folder of device A_X100)" in capsys.readouterr().out
