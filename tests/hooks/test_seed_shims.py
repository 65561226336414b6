from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.hooks.conftest import MakeRepo, Repo

TOOLS = Path(__file__).parents[2] / "tools/patch"


def seed(repo: Repo, script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(TOOLS / script), *args], cwd=repo.path,
                          capture_output=True, text=True)


@pytest.fixture(scope="module")
def two_vendors(make_repo: MakeRepo) -> tuple[Repo, str, str]:
    repo = make_repo("seed")
    repo.write("core.py", "core\n")
    base = repo.commit("upstream")
    repo.write("a.py", "A\n")
    cur = repo.commit("vendor A")
    return repo, base, cur


def test_seed_patch_and_unpatch_with_the_exact_seed_arguments(two_vendors: tuple[Repo, str, str]) -> None:
    repo, base, cur = two_vendors
    done = seed(repo, "patch.py", "--device-type", "A_X100", "--base-commit-id", base[:8],
                "--current-commit-id", cur[:8])
    assert done.returncode == 0, done.stderr
    assert (repo.path / f"hardwares/A_X100/{base[:8]}/{base[:8]}.patch").is_file()
    done = seed(repo, "unpatch.py", "--device-type", "A_X100", "--commit-id", base[:4],
                "--dir", "build")
    assert done.returncode == 0, done.stderr
    assert (repo.path / "build/A_X100" / repo.path.name / "a.py").read_text() == "A\n"


def test_seed_heterogeneous_arguments(two_vendors: tuple[Repo, str, str]) -> None:
    repo, base, cur = two_vendors
    seed(repo, "patch.py", "--device-type", "A_X100", "--base-commit-id", base[:8],
         "--current-commit-id", cur[:8])
    done = seed(repo, "patch.py", "--device-type", "A_X100", "B_Y100", "--base-commit-id",
                base[:8], "--current-commit-id", cur[:8])
    assert done.returncode == 0, done.stderr
    assert (repo.path / "hardwares/hetero.txt").read_text() == f"{base[:8]}: A_X100 B_Y100\n"


@pytest.mark.parametrize("script, args", [
    ("patch.py", ["--device-type", "A_X100", "--base-commit-id", "abcd", "--key-path", "k"]),
    ("unpatch.py", ["--device-type", "A_X100", "--commit-id", "abcd", "--force"]),
    ("patch.py", ["--device-type", "A_X100"]),
])
def test_seed_shims_reject_flags_outside_the_seed(two_vendors: tuple[Repo, str, str], script: str,
                                                  args: list[str]) -> None:
    assert seed(two_vendors[0], script, *args).returncode == 2


def test_seed_patch_error_exits_non_zero(two_vendors: tuple[Repo, str, str]) -> None:
    repo, base, cur = two_vendors
    done = seed(repo, "patch.py", "--device-type", "A_X100", "--base-commit-id", cur[:8],
                "--current-commit-id", base[:8])
    assert done.returncode == 2 and "not an ancestor" in done.stderr
