"""Commands that used to end without a word: each now says what it did not do, and a misspelt
path is a usage error (2), not a failed check (1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from flagbot.hooks import cli
from tests.hooks.conftest import MakeRepo, Repo


@pytest.fixture
def work(vendor_repo: Repo, tmp_path: Path) -> Repo:
    return vendor_repo.copy(tmp_path / "work")


def test_patch_names_the_uncommitted_changes_it_left_out(work: Repo,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    work.write("src/model.py", "uncommitted edit\n")
    work.write("notes.txt", "untracked\n")
    assert cli.main(["-C", str(work.path), "patch", "--device-type", "A_X100",
                     "--base-commit-id", "base"]) == 0
    err = capsys.readouterr().err
    assert "2 uncommitted change(s) are not in the patch (notes.txt, src/model.py)" in err
    assert "hardwares/" not in err  # the patch it just wrote is not "left out"


def test_patch_of_a_clean_tree_has_no_note(work: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["-C", str(work.path), "patch", "--device-type", "A_X100",
                     "--base-commit-id", "base"]) == 0
    assert "uncommitted" not in capsys.readouterr().err


@pytest.mark.parametrize("command", [
    ["verify", "hardwares/A_X100/deadbeef/deadbeef.patch"],
    ["migrate", "hardware/A_X100/deadbeef/deadbeef.patch"],
    ["check-routing", "backend.conf"],
])
def test_a_misspelt_path_is_a_usage_error(work: Repo, command: list[str],
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["-C", str(work.path), *command]) == 2
    assert f"{command[1]}: no such file" in capsys.readouterr().err


def test_check_routing_without_files_checks_the_tracked_ones(make_repo: MakeRepo,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo("routing")
    repo.write("configs/backends_cuda.conf", "no_such_op = cuda\n")
    repo.commit("routing")
    assert cli.main(["-C", str(repo.path), "check-routing", "--no-kernels"]) == 1
    out = capsys.readouterr().out
    assert "configs/backends_cuda.conf:1" in out and "1 file(s)" in out


def test_check_routing_with_nothing_to_check_says_so(make_repo: MakeRepo,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo("no-routing")
    assert cli.main(["-C", str(repo.path), "check-routing"]) == 2
    assert "no routing file named, and no tracked backends*.conf" in capsys.readouterr().err
