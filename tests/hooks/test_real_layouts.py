"""FlagGems' and FlagScale's real layouts, with no flagbot configuration: nothing passes silently.

The trees are small extracts of the upstream repositories (testing/resources/real/, each with
a README naming its commit); the real `pre-commit` runs are in test_precommit_hooks.py.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flagbot.hooks import check_patches, check_vendor_backend, cli
from flagbot.hooks.config import CONFIG_PATH
from tests.hooks.conftest import MakeRepo, Repo

REAL = Path(__file__).resolve().parents[2] / "testing" / "resources" / "real"
BACKEND = "src/flag_gems/runtime/backend"
FLAGGEMS_ERRORS = [
    f"{BACKEND}/_kunlunxin/__init__.py:28: error: [unused-unknown] 'unique'",
]
# What FlagGems ed2508bc does not trip over: warnings, never errors (each was once an error).
FLAGGEMS_WARNINGS = [
    f"{BACKEND}/_nvidia/hopper/__init__.py:0: warning: [arch-heuristics-export]",
    f"{BACKEND}/_sunrise/fused/__init__.py:20: warning: [all-duplicate] 'fused_experts_impl'",
    f"{BACKEND}/_sunrise/fused/__init__.py:23: warning: [all-duplicate] 'inplace_fused_experts'",
    f"{BACKEND}/_sunrise/fused/__init__.py:24: warning: [all-duplicate] 'outplace_fused_experts'",
]
OLD_PATCHES = ["hardware/kunlunxin_R300p/237377e9/237377e9.patch",
               "hardware/metax_C500/a44556c0/a44556c0.patch"]
ENCRYPTED = "hardware/bi_V150/758e33e0/758e33e0.patch.encrypted"


def real_repo(make_repo: MakeRepo, name: str, config: str | None = None) -> Repo:
    repo = make_repo(name)
    shutil.copytree(REAL / name, repo.path, dirs_exist_ok=True)
    (repo.path / "README.md").unlink()
    if config is not None:
        repo.write(CONFIG_PATH, config)
    repo.commit("extract")
    return repo


@pytest.fixture(scope="module")
def flaggems(make_repo: MakeRepo) -> Repo:
    return real_repo(make_repo, "flaggems")


@pytest.fixture(scope="module")
def flagscale(make_repo: MakeRepo) -> Repo:
    return real_repo(make_repo, "flagscale-g1")


def run(repo: Repo, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    rc = cli.main(["-C", str(repo.path), *args])
    return rc, capsys.readouterr().out


def test_flaggems_vendor_folder_is_checked_without_configuration(
        flaggems: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = run(flaggems, capsys, "check-backend", "--all")
    assert rc == 1
    assert all(line in out for line in FLAGGEMS_ERRORS + FLAGGEMS_WARNINGS), out
    assert "check-backend: 3 vendor folder(s): 1 error(s), 4 warning(s)" in out


def test_flaggems_files_as_pre_commit_passes_them_are_checked(
        flaggems: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    files = [f"{BACKEND}/_kunlunxin/__init__.py", f"{BACKEND}/_nvidia/__init__.py"]
    assert check_vendor_backend.main(files, cwd=str(flaggems.path)) == 1
    assert FLAGGEMS_ERRORS[0] in capsys.readouterr().out


def test_flaggems_arch_heuristics_it_never_reads_are_not_checked(
        flaggems: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    # ed2508bc: _nvidia/hopper/heuristics_config_utils.py has no HEURISTICS_CONFIGS, and
    # hopper/__init__.py does not re-export one, so FlagGems uses _nvidia's dict.
    assert check_vendor_backend.main([f"{BACKEND}/_nvidia"], cwd=str(flaggems.path)) == 0
    out = capsys.readouterr().out
    assert "heuristics-shape" not in out and FLAGGEMS_WARNINGS[0] in out


def test_flaggems_duplicate_all_entries_are_warnings(
        flaggems: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    # ed2508bc: _sunrise/fused/__init__.py lists three names twice in __all__
    assert check_vendor_backend.main([f"{BACKEND}/_sunrise"], cwd=str(flaggems.path)) == 0
    out = capsys.readouterr().out
    assert all(line in out for line in FLAGGEMS_WARNINGS[1:]), out


def test_flaggems_vendor_detected_through_torch_may_leave_the_command_empty(
        flaggems: Repo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # ed2508bc: _nvidia (and _enflame) set device_query_cmd="": FlagGems finds them through
    # torch first; a vendor it finds only by command (_arm's "" upstream) is still warned.
    work = flaggems.copy(tmp_path / "w")
    init = work.path / BACKEND / "_kunlunxin/__init__.py"
    init.write_text(init.read_text().replace('device_query_cmd="xpu-smi"', 'device_query_cmd=""'))
    check_vendor_backend.main(["--all"], cwd=str(work.path))
    out = capsys.readouterr().out
    assert f"{BACKEND}/_kunlunxin/__init__.py:20: warning: [device-query-empty]" in out
    assert "_nvidia/__init__.py:20: warning: [device-query-empty]" not in out


@pytest.fixture(scope="module")
def flaggems_misconfigured(make_repo: MakeRepo) -> Repo:
    return real_repo(make_repo, "flaggems", config="backends: backends\n")


def test_files_outside_the_configured_root_warn_with_the_config_line(
        flaggems_misconfigured: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = run(flaggems_misconfigured, capsys, "check-backend",
                  f"{BACKEND}/_sunrise/fused/__init__.py")
    assert rc == 0
    assert f"{BACKEND}/_sunrise/fused/__init__.py:0: warning: [nothing-checked]" in out
    assert f"`backends: {BACKEND}` in {CONFIG_PATH}" in out


def test_strict_makes_nothing_checked_fail(
        flaggems_misconfigured: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    rc, _ = run(flaggems_misconfigured, capsys, "check-backend", "--strict",
                f"{BACKEND}/_nvidia/__init__.py")
    assert rc == 1


def test_under_pre_commit_strict_is_the_default(
        flaggems_misconfigured: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRE_COMMIT", "1")
    files = [f"{BACKEND}/_nvidia/__init__.py"]
    assert check_vendor_backend.main(files, cwd=str(flaggems_misconfigured.path)) == 1
    assert check_vendor_backend.main(["--no-strict", *files],
                                     cwd=str(flaggems_misconfigured.path)) == 0


def test_empty_configured_root_names_the_layout_that_has_vendors(
        flaggems_misconfigured: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = run(flaggems_misconfigured, capsys, "check-backend", "--all")
    assert rc == 0
    assert f"backends:0: warning: [nothing-checked] no _<vendor> folder under backends/, but " \
           f"{BACKEND}/ has 3" in out


def test_flagscale_verify_examines_every_patch(
        flagscale: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = run(flagscale, capsys, "verify")
    assert rc == 1
    assert "verify (3 patch file(s)): 2 error(s), 1 warning(s)" in out
    for rel in OLD_PATCHES:
        assert f"{rel}:0: error: [patch-old-format]" in out
        assert f"`flagbot migrate {rel}`" in out
    assert f"{ENCRYPTED}:0: warning: [patch-encrypted]" in out


def test_flagscale_patch_hook_at_commit_time_reports_each_file(
        flagscale: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    assert check_patches.main(["--layout-only", *OLD_PATCHES, ENCRYPTED],
                              cwd=str(flagscale.path)) == 1
    out = capsys.readouterr().out
    assert out.count("[patch-old-format]") == 2 and "[patch-encrypted]" in out


def test_flagscale_with_the_plural_configured_warns_and_names_hardware(
        make_repo: MakeRepo, capsys: pytest.CaptureFixture[str]) -> None:
    repo = real_repo(make_repo, "flagscale-g1", config="hardwares: hardwares\n")
    rc, out = run(repo, capsys, "verify", "--strict")
    assert rc == 1
    assert "no patch under hardwares/, but hardware/ has 3" in out
    assert f"`hardwares: hardware` in {CONFIG_PATH}" in out
    assert check_patches.main(["--strict", *OLD_PATCHES], cwd=str(repo.path)) == 1
    assert f"{OLD_PATCHES[0]}:0: warning: [nothing-checked] 2 file(s) given" in \
        capsys.readouterr().out


def test_hetero_txt_beside_the_seed_tools_is_found(
        flagscale: Repo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    work = flagscale.copy(tmp_path / "w")
    work.write("tools/patch/hetero.txt", "237377e9: kunlunxin_R300p metax_C500\n")
    rc, out = run(work, capsys, "hetero", "check")
    assert rc == 1
    assert "tools/patch/hetero.txt:1: error: [hetero-missing-patch] metax_C500" in out
    assert "kunlunxin_R300p is listed" not in out


def test_migrate_names_the_missing_base_and_lists_encrypted(
        flagscale: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = run(flagscale, capsys, "migrate", "--dry-run")
    assert rc == 1
    assert "its base 237377e9 is not a commit here" in out
    assert f"skipped {ENCRYPTED}" in out


@pytest.mark.parametrize("rel", ["_nvidia/enable_configs.yaml", "_nvidia/hopper/mm_hopper_expand.yaml"])
def test_flaggems_expand_and_enable_files_are_parsed(
        flaggems: Repo, tmp_path: Path, rel: str, capsys: pytest.CaptureFixture[str]) -> None:
    # ed2508bc's files pass as they are (the extract above); a syntax error in one is an error,
    # as in tune_configs.yaml: FlagGems loads both with yaml.safe_load.
    work = flaggems.copy(tmp_path / "w")
    path = work.path / BACKEND / rel
    path.write_text(path.read_text() + "broken: [unclosed\n")
    assert check_vendor_backend.main([f"{BACKEND}/_nvidia"], cwd=str(work.path)) == 1
    assert f"{BACKEND}/{rel}:" in capsys.readouterr().out.split("[yaml-syntax]")[0].rsplit("\n", 1)[-1]
