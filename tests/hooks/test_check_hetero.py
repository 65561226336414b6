"""The check-hetero hook entry: exit codes, config, output (rules live in hooks/patches/hetero.py)."""

from __future__ import annotations

import json

import pytest

from flagbot.hooks import check_hetero
from tests.hooks.conftest import MakeRepo


def test_listed_device_without_patch_fails(make_repo: MakeRepo, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo("hetero-missing")
    repo.write("hardwares/hetero.txt", "aaaa1111: A_X100\n")
    repo.commit()
    assert check_hetero.main([], cwd=str(repo.path)) == 1
    assert "[hetero-missing-patch]" in capsys.readouterr().out


def test_canonical_file_with_patches_passes(make_repo: MakeRepo) -> None:
    repo = make_repo("hetero-ok")
    repo.write("hardwares/hetero.txt", "aaaa1111: A_X100 B_Y100\n")
    for dev in ("A_X100", "B_Y100"):
        repo.write(f"hardwares/{dev}/aaaa1111/aaaa1111.patch", "x\n")
    repo.commit()
    assert check_hetero.main(["ignored/file.txt"], cwd=str(repo.path)) == 0


def test_hardwares_folder_comes_from_config(make_repo: MakeRepo, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo("hetero-config")
    repo.write(".github/flagbot.yml", "hardwares: vendor/hw\n")
    repo.write("vendor/hw/hetero.txt", "bbbb2222: B_Y100 A_X100\n")
    repo.commit()
    assert check_hetero.main(["--format", "json"], cwd=str(repo.path)) == 1
    doc = json.loads(capsys.readouterr().out)
    assert {f["path"] for f in doc["findings"]} == {"vendor/hw/hetero.txt"}


def test_outside_a_repository_is_a_usage_error(tmp_path: object) -> None:
    assert check_hetero.main([], cwd=str(tmp_path)) == 2


def test_an_oversized_hetero_txt_is_a_finding_not_read(tmp_path) -> None:
    from flagbot.hooks.limits import MAX_HETERO_BYTES
    from flagbot.hooks.patches.hetero import check_hetero

    (tmp_path / "hardwares").mkdir()
    (tmp_path / "hardwares" / "hetero.txt").write_text("00000001: A_X100\n" * (MAX_HETERO_BYTES // 17 + 1))
    [f] = check_hetero(tmp_path)
    assert f.rule == "hetero-format" and "limit" in f.message
