from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from flagbot.hooks import cli
from flagbot.hooks.patches import verify
from tests.hooks.conftest import Repo, git_env


def old_style(repo: Repo, root: str, device: str, width: int) -> str:
    """An old FlagScale tools/patch file: plain format-patch (abbreviated index, version
    signature) of a three-dot range."""
    base = repo.rev("base")
    text = subprocess.run(["git", "format-patch", "--stdout", "--binary", f"{base}...cur", "--",
                           ".", ":(exclude)hardwares"], cwd=repo.path, env=git_env(),
                          capture_output=True, check=True).stdout
    assert b"\n-- \n" in text
    rel = f"{root}/{device}/{base[:width]}/{base[:width]}.patch"
    repo.write(rel, text)
    return rel


@pytest.fixture
def work(vendor_repo: Repo, tmp_path: Path) -> Repo:
    repo = vendor_repo.copy(tmp_path / "work")
    (repo.path / "hardwares/Z_Z1/deadbeef/deadbeef.patch").unlink()  # junk, not a patch
    return repo


@pytest.mark.parametrize("root, width", [("hardware", 6), ("hardwares", 8), ("hardware", 8)])
def test_old_patch_is_regenerated_canonically_and_verifies(work: Repo, root: str, width: int) -> None:
    old = old_style(work, root, "metax_C550", width)
    work.commit("old layout patch")
    assert cli.main(["-C", str(work.path), "migrate"]) == 0
    base8 = work.rev("base")[:8]
    new = f"hardwares/metax_C550/{base8}/{base8}.patch"
    assert verify.verify_patch(work.path, new) == []
    assert (work.path / old).exists() == (old == new)
    assert b"\n-- \n" not in (work.path / new).read_bytes()


def test_uncommitted_old_patch_is_kept(work: Repo) -> None:
    old = old_style(work, "hardware", "metax_C550", 6)
    assert cli.main(["-C", str(work.path), "migrate"]) == 0
    assert (work.path / old).exists()


def test_hand_edited_patch_is_reported_and_kept(work: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    old = old_style(work, "hardware", "metax_C550", 6)
    path = work.path / old
    path.write_bytes(path.read_bytes().replace(b"+tail 2\n", b"+tail 2 edited\n", 1))
    work.commit("hand edited")
    assert cli.main(["-C", str(work.path), "migrate"]) == 1
    out = capsys.readouterr().out
    assert "hand-edited? src/model.py" in out and path.exists()


def test_dry_run_writes_nothing(work: Repo) -> None:
    old_style(work, "hardware", "metax_C550", 6)
    snap = work.snapshot()
    assert cli.main(["-C", str(work.path), "migrate", "--dry-run"]) == 0
    assert work.snapshot() == snap


def test_patch_that_does_not_apply_is_an_error(work: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    old = old_style(work, "hardware", "metax_C550", 6)
    path = work.path / old
    path.write_bytes(path.read_bytes().replace(b" line 1\n", b" line one\n", 1))
    assert cli.main(["-C", str(work.path), "migrate"]) == 1
    assert "does not apply" in capsys.readouterr().out


def test_junk_file_in_patch_layout_is_an_error(vendor_repo: Repo, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    work = vendor_repo.copy(tmp_path / "junk")
    assert cli.main(["-C", str(work.path), "migrate"]) == 1
    assert "cannot read it as a patch series" in capsys.readouterr().out
