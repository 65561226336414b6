"""A patch hook whose files the repository's own pre-commit `exclude:` hides says so."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flagbot.hooks import check_patches
from tests.hooks.conftest import MakeRepo, Repo
from tests.hooks.test_real_layouts import ENCRYPTED, REAL

# The top-level `exclude:` of FlagScale's .pre-commit-config.yaml (flagos-ai/FlagScale
# 3fde442), verbatim; its hooks follow in the real file.
FLAGSCALE_EXCLUDE = """exclude: |
    (?x)^(
        flagscale/backends/.*|
        third_party/.*|
        megatron-energon/.*|
        hardware/.*\\.patch|
        .*\\.md|
        .*\\.sh|
        .*\\.txt|
        .*\\.yaml|
        .*\\.yml$
    )$
repos:
-   repo: https://github.com/<org>/flagbot
    rev: v0.1.0
    hooks:
    -   id: check-patches
"""


@pytest.fixture()
def flagscale(make_repo: MakeRepo) -> Repo:
    repo = make_repo("flagscale-excluded")
    shutil.copytree(REAL / "flagscale-g1", repo.path, dirs_exist_ok=True)
    (repo.path / "README.md").unlink()
    repo.write(".pre-commit-config.yaml", FLAGSCALE_EXCLUDE)
    repo.commit("extract with FlagScale's exclude")
    return repo


def test_every_patch_excluded_is_nothing_checked_not_a_pass(
        flagscale: Repo, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PRE_COMMIT", "1")
    # what pre-commit hands the hook: the encrypted file only, the .patch files are excluded
    assert check_patches.main(["--layout-only", ENCRYPTED], cwd=str(flagscale.path)) == 1
    out = capsys.readouterr().out
    assert "hardware:0: warning: [nothing-checked] all 2 stored patch(es) under hardware/ are " \
           "excluded from the check-patches hook by the top-level `exclude:`" in out


def test_a_hook_level_exclude_is_named(flagscale: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    flagscale.write(".pre-commit-config.yaml", "repos:\n- repo: local\n  hooks:\n"
                    "  - id: check-patches\n    exclude: ^hardware/\n")
    check_patches.main(["--layout-only", ENCRYPTED], cwd=str(flagscale.path))
    assert "by the `exclude:` of the check-patches hook" in capsys.readouterr().out


def test_patches_left_visible_are_checked_without_the_warning(
        flagscale: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    flagscale.write(".pre-commit-config.yaml", FLAGSCALE_EXCLUDE.replace("hardware/.*\\.patch|\n", ""))
    assert check_patches.main(["--layout-only", ENCRYPTED], cwd=str(flagscale.path)) == 0
    assert "nothing-checked" not in capsys.readouterr().out


def test_no_precommit_config_no_warning(tmp_path: Path, flagscale: Repo,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    (flagscale.path / ".pre-commit-config.yaml").unlink()
    check_patches.main(["--layout-only", ENCRYPTED], cwd=str(flagscale.path))
    assert "nothing-checked" not in capsys.readouterr().out
