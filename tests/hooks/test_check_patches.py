"""The check-patches hook entry: stage-dependent mode, shallow clones, selection of files."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from flagbot.hooks import check_patches
from flagbot.hooks.patches import make
from tests.hooks.conftest import MakeRepo, Repo, git_env


@pytest.fixture(scope="module")
def patched(make_repo: MakeRepo) -> Repo:
    repo = make_repo("check-patches")
    repo.write("src/a.py", "print(1)\n")
    repo.commit("base")
    repo.git("tag", "base")
    repo.write("src/a.py", "print(2)\n")
    repo.commit("[Vendor] change")
    make.make_patch(repo.path, ["A_X100"], "base", "HEAD")
    repo.commit("store patch")
    return repo


def test_stored_patch_passes_full_check(patched: Repo) -> None:
    assert check_patches.main(["--full"], cwd=str(patched.path)) == 0


def test_misplaced_patch_fails_layout_mode(patched: Repo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    work = patched.copy(tmp_path / "w")
    work.write("hardwares/a_x100/zz/zz.patch", "junk\n")
    assert check_patches.main(["--layout-only", "hardwares/a_x100/zz/zz.patch"], cwd=str(work.path)) == 1
    assert "[patch-layout]" in capsys.readouterr().out


def test_shallow_clone_warns_base_unavailable(patched: Repo, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{patched.path}", str(shallow)],
                   check=True, env=git_env())
    assert check_patches.main(["--full"], cwd=str(shallow)) == 0
    captured = capsys.readouterr()
    assert "warning: [base-unavailable]" in captured.out
    assert "checked for layout only" in captured.err


@pytest.mark.parametrize(("env", "cmdline", "stage"), [
    ({}, b"", None),
    ({"PRE_COMMIT": "1", "PRE_COMMIT_FROM_REF": "a"}, b"", "pre-push"),
    ({"PRE_COMMIT": "1"}, b"python\0-m\0pre_commit\0hook-impl\0--hook-type=pre-commit\0", "pre-commit"),
    ({"PRE_COMMIT": "1"}, b"pre-commit\0run\0--hook-stage\0manual\0check-patches\0", "manual"),
    ({"PRE_COMMIT": "1"}, b"pre-commit\0try-repo\0.\0--all-files\0", "pre-commit"),
])
def test_hook_stage_is_read_from_pre_commit(env: dict[str, str], cmdline: bytes, stage: str | None) -> None:
    assert check_patches.hook_stage(env, cmdline) == stage


def test_non_patch_files_are_ignored(patched: Repo) -> None:
    assert check_patches.select_patches(patched.path, "hardwares", ["README.md", "src/a.py"]) == []
