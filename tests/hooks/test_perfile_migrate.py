"""`flagbot migrate` between FlagScale's per-file folders and the seed layout (real extract)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flagbot.hooks import cli
from flagbot.hooks.patches import perfile
from flagbot.hooks.patches.perfile_migrate import to_perfile, to_seed
from flagbot.hooks.patches.verify import verify_patch
from tests.hooks import perfile_repo as pr
from tests.hooks.conftest import MakeRepo, Repo
from tests.hooks.test_perfile_verify import change_context


@pytest.fixture(scope="module")
def flagscale(make_repo: MakeRepo) -> pr.PerfileRepo:
    return pr.build(make_repo, "migrate")


def seed_of(folder: str, base: str) -> str:
    return f"{folder.rsplit('/', 1)[0]}/{base[:8]}/{base[:8]}.patch"


def run(repo: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    rc = cli.main(["-C", str(repo), "migrate", *args])
    return rc, capsys.readouterr().out


def test_dry_run_names_a_target_or_a_reason_for_every_folder_and_writes_nothing(
        flagscale: pr.PerfileRepo, capsys: pytest.CaptureFixture[str]) -> None:
    before = flagscale.repo.snapshot()
    rc, out = run(flagscale.path, capsys, "--dry-run")
    assert rc == 0
    a, b = flagscale.base_a[:8], flagscale.base_b[:8]
    assert f"would convert {pr.HUAWEI} -> {pr.HW}/Huawei_Atlas800TA3/{a}/{a}.patch" in out
    assert f"would convert {pr.CAMBRICON} -> {pr.HW}/Cambricon_MLU/{a}/{a}.patch" in out
    assert f"would convert {pr.METAX} -> {pr.HW}/Metax_C550/{b}/{b}.patch" in out
    assert f"skipped {pr.KUNLUNXIN}\n  2 encrypted patch file(s); pass --key-path" in out
    assert f"skipped {pr.MEGATRON}\n  its patches change the Megatron-LM submodule" in out
    assert flagscale.repo.snapshot() == before


@pytest.mark.parametrize(("folder", "abbrev"), [(pr.HUAWEI, 9), (pr.CAMBRICON, 8), (pr.METAX, None)])
def test_seed_patch_is_proven_and_converts_back_to_the_same_bytes(
        flagscale: pr.PerfileRepo, tmp_path: Path, folder: str, abbrev: int | None) -> None:
    repo = flagscale.repo.copy(tmp_path / "copy")
    conv = to_seed(repo.path, perfile.scan_folder(repo.path, folder), pr.HW)
    assert conv.status == "converted", conv.reason
    [(rel, data)] = conv.targets.items()
    repo.write(rel, data)
    assert verify_patch(repo.path, rel, hardwares=pr.HW) == []
    if abbrev is None:  # the whole-backend diff.patch becomes per-file files of the same changes
        return
    back = to_perfile(repo.path, rel, pr.HW, tasks=["train"], abbrev=abbrev)
    originals = {p.relative_to(repo.path).as_posix(): p.read_bytes()
                 for p in (repo.path / folder).rglob("*.patch")}
    assert back.targets == originals  # byte for byte what FlagScale's tool wrote


def test_to_perfile_writes_a_folder_that_verifies_and_converts_back(
        flagscale: pr.PerfileRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = flagscale.repo.copy(tmp_path / "fresh")
    seed = to_seed(repo.path, perfile.scan_folder(repo.path, pr.METAX), pr.HW).targets
    moved = {k.replace("Metax_C550", "Moore_S4000"): v for k, v in seed.items()}
    [(rel, data)] = moved.items()
    repo.write(rel, data)
    rc, out = run(repo.path, capsys, "--to-perfile", rel, "--task", "inference")
    assert rc == 0, out
    folder = f"{pr.HW}/Moore_S4000/FlagScale"
    assert f"converted {rel} -> {folder}/ (13 files)" in out
    assert cli.main(["-C", str(repo.path), "verify", f"{folder}/diff.yaml"]) == 0
    again = to_seed(repo.path, perfile.scan_folder(repo.path, folder), pr.HW)
    assert list(again.targets) == [rel]  # the same changes (the message names the new folder)
    assert again.targets[rel].split(b"\n---\n", 1)[1] == data.split(b"\n---\n", 1)[1]


def test_a_folder_that_does_not_apply_is_an_error_with_the_reason(
        flagscale: pr.PerfileRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo: Repo = flagscale.repo.copy(tmp_path / "bad")
    path = repo.path / pr.ARGS_PATCH
    path.write_bytes(change_context(path.read_bytes()))
    rc, out = run(repo.path, capsys, pr.CAMBRICON)
    assert rc == 1
    assert f"error {pr.CAMBRICON}\n  does not apply at {flagscale.base_a[:12]}" in out
    assert not (repo.path / seed_of(pr.CAMBRICON, flagscale.base_a)).exists()


def test_an_existing_different_seed_patch_is_never_overwritten(
        flagscale: pr.PerfileRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = flagscale.repo.copy(tmp_path / "clash")
    target = seed_of(pr.CAMBRICON, flagscale.base_a)
    repo.write(target, "the vendor's own file\n")
    rc, out = run(repo.path, capsys, pr.CAMBRICON)
    assert rc == 1 and "already exists with other content" in out
    assert (repo.path / target).read_text() == "the vendor's own file\n"
    shutil.rmtree(repo.path / target.rsplit("/", 1)[0])
    assert run(repo.path, capsys, pr.CAMBRICON)[0] == 0
    assert run(repo.path, capsys, pr.CAMBRICON)[1].startswith("unchanged")


def test_unpatch_names_the_per_file_folders_and_builds_after_migrate(
        flagscale: pr.PerfileRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = flagscale.repo.copy(tmp_path / "unpatch")
    args = ["-C", str(repo.path), "unpatch", "--device-type", "Huawei_Atlas800TA3",
            "--commit-id", flagscale.base_a[:8]]
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert "holds FlagScale's per-file folders (FlagScale)" in err
    assert f"flagbot migrate {pr.HUAWEI}" in err
    assert run(repo.path, capsys, pr.HUAWEI)[0] == 0
    assert cli.main(args) == 0
    built = repo.path / "build" / "Huawei_Atlas800TA3" / repo.path.name
    assert (built / "tools/checkpoint/qwen2_5_vl/run.sh").is_file()
