"""The worked example in `hardwares/` is what the tools really produce and accept."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from testing import example_upstream

STORED = Path(__file__).resolve().parents[2] / "hardwares"
A, B = "A_X100", "B_Y100"


def flagbot(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "flagbot.hooks.cli", "-C", str(repo), *args],
                          capture_output=True, text=True, check=False)


def stored_files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != "README.md"}


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> example_upstream.Example:
    return example_upstream.build(tmp_path_factory.mktemp("example") / "miniscale")


def test_the_stored_example_is_what_flagbot_patch_writes(example: example_upstream.Example,
                                                         tmp_path: Path) -> None:
    work = tmp_path / "miniscale"
    shutil.copytree(example.path, work, symlinks=True)
    base = example.base
    first = flagbot(work, "patch", "--device-type", A, "--base-commit-id", base,
                    "--current-commit-id", example_upstream.branch(A))
    assert first.returncode == 0, first.stderr
    second = flagbot(work, "patch", "--device-type", A, B, "--base-commit-id", base,
                     "--current-commit-id", example_upstream.branch(B))
    assert second.returncode == 0, second.stderr
    assert stored_files(work / "hardwares") == stored_files(STORED)
    assert (STORED / "hetero.txt").read_text() == f"{base[:8]}: {A} {B}\n"


def test_the_stored_example_verifies_and_unpatches(example: example_upstream.Example,
                                                   tmp_path: Path) -> None:
    work = tmp_path / "miniscale"
    shutil.copytree(example.path, work, symlinks=True)
    shutil.copytree(STORED, work / "hardwares")
    verify = flagbot(work, "verify")
    assert verify.returncode == 0 and "2 patch file(s)" in verify.stdout, verify.stdout + verify.stderr
    hetero = flagbot(work, "hetero", "check")
    assert hetero.returncode == 0, hetero.stdout + hetero.stderr
    built = flagbot(work, "unpatch", "--device-type", A, B, "--commit-id", example.base[:8])
    assert built.returncode == 0, built.stderr
    for device, head in example.heads.items():
        tree = subprocess.run(["git", "rev-parse", "HEAD^{tree}"], cwd=work / "build" / device /
                              "miniscale", capture_output=True, text=True, check=True).stdout
        want = subprocess.run(["git", "rev-parse", f"{head}^{{tree}}"], cwd=work,
                              capture_output=True, text=True, check=True).stdout
        assert tree == want, device


def test_the_readme_names_the_stored_base(example: example_upstream.Example) -> None:
    readme = (STORED / "README.md").read_text(encoding="utf-8")
    assert example.base[:8] in readme
    assert all(f"{dev}/{example.base[:8]}/{example.base[:8]}.patch" in readme for dev in (A, B))
