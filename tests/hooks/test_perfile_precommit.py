"""The `check-patches` hook, run by the real pre-commit, on FlagScale's per-file layout."""

from __future__ import annotations

from pathlib import Path

from tests.hooks import perfile_repo as pr
from tests.hooks.conftest import MakeRepo
from tests.hooks.test_perfile_verify import change_context
from tests.hooks.test_precommit_hooks import hook_repo, precommit_env, run_hook  # noqa: F401


def test_check_patches_hook_verifies_per_file_folders(
        hook_repo: tuple[Path, str], precommit_env: dict[str, str],  # noqa: F811
        make_repo: MakeRepo) -> None:
    built = pr.build(make_repo, "precommit")
    ok = run_hook(precommit_env, hook_repo, built.path, "check-patches", "--all-files",
                  "--hook-stage", "manual")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "Passed" in ok.stdout
    patch = built.path / pr.ARGS_PATCH
    patch.write_bytes(change_context(patch.read_bytes()))
    built.repo.commit("a changed context line")
    bad = run_hook(precommit_env, hook_repo, built.path, "check-patches", "--all-files",
                   "--hook-stage", "manual")
    assert bad.returncode == 1
    assert f"{pr.ARGS_PATCH}:5: error: [perfile-apply]" in bad.stdout
    # a commit touching only the folder's diff.yaml still checks that folder (layout at commit)
    meta = built.path / pr.CAMBRICON / "diff.yaml"
    meta.write_text(meta.read_text().replace("commit: ", "commit: 12"))
    built.repo.git("add", str(meta))
    staged = run_hook(precommit_env, hook_repo, built.path, "check-patches")
    assert staged.returncode == 1
    assert f"{pr.CAMBRICON}/diff.yaml:0: error: [perfile-meta]" in staged.stdout
