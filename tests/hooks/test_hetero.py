from __future__ import annotations

import pytest

from flagbot.hooks import cli
from flagbot.hooks.patches import hetero
from tests.hooks.conftest import MakeRepo, Repo


def test_format_sorts_lines_and_devices_and_merges_duplicates() -> None:
    text = "# vendors\nbbbbbbbb:  Z_Z1 A_A1 A_A1\n\n# note for a\naaaaaaaa: C_C1\nbbbbbbbb: B_B1\n"
    assert hetero.format_hetero(hetero.parse(text)) == (
        "# note for a\naaaaaaaa: C_C1\n# vendors\nbbbbbbbb: A_A1 B_B1 Z_Z1\n")


def test_merge_adds_devices_to_an_existing_line_and_keeps_comments() -> None:
    text = "# header\naaaaaaaa: A_X100 B_Y100\n"
    assert hetero.merge(text, "aaaaaaaa", ["C_Z1", "A_X100"]) == (
        "# header\naaaaaaaa: A_X100 B_Y100 C_Z1\n")
    assert hetero.merge("", "12345678", ["B_Y100", "A_X100"]) == "12345678: A_X100 B_Y100\n"


@pytest.mark.parametrize("line", ["aaaa: A_X100", "aaaaaaaa A_X100", "aaaaaaaa:", "AAAAAAAA: A_X1",
                                  "aaaaaaaa: A-X100", "aaaaaaaa: ../x"])
def test_parse_rejects_bad_lines_with_their_number(line: str) -> None:
    with pytest.raises(hetero.HeteroError) as err:
        hetero.parse(f"# ok\n{line}\n")
    assert err.value.line == 2


def hetero_repo(make_repo: MakeRepo, text: str, patches: list[str]) -> Repo:
    repo = make_repo("het")
    repo.write("hardwares/hetero.txt", text)
    for rel in patches:
        repo.write(f"hardwares/{rel}", "x\n")
    return repo


def test_check_accepts_a_canonical_file_with_all_patches(make_repo: MakeRepo) -> None:
    repo = hetero_repo(make_repo, "aaaaaaaa: A_X100 B_Y100\n",
                       ["A_X100/aaaaaaaa/aaaaaaaa.patch", "B_Y100/aaaaaaaa/aaaaaaaa.patch"])
    assert hetero.check_hetero(repo.path) == []
    assert cli.main(["-C", str(repo.path), "hetero", "check"]) == 0


def test_check_names_a_listed_device_without_its_patch(make_repo: MakeRepo) -> None:
    repo = hetero_repo(make_repo, "aaaaaaaa: A_X100 B_Y100\n", ["A_X100/aaaaaaaa/aaaaaaaa.patch"])
    findings = hetero.check_hetero(repo.path)
    assert [f.rule for f in findings] == ["hetero-missing-patch"] and "B_Y100" in findings[0].message
    assert cli.main(["-C", str(repo.path), "hetero", "check"]) == 1


@pytest.mark.parametrize("text, rule", [
    ("bbbbbbbb: A_X100\naaaaaaaa: A_X100\n", "hetero-order"),
    ("aaaaaaaa: A_X100\naaaaaaaa: A_X100\n", "hetero-duplicate"),
    ("aaaaaaaa:  A_X100\n", "hetero-format"),
    ("aaaaaaaa: garbage!\n", "hetero-format"),
])
def test_check_reports_non_canonical_files(make_repo: MakeRepo, text: str, rule: str) -> None:
    repo = hetero_repo(make_repo, text, ["A_X100/aaaaaaaa/aaaaaaaa.patch",
                                         "A_X100/bbbbbbbb/bbbbbbbb.patch"])
    assert rule in [f.rule for f in hetero.check_hetero(repo.path)]


def test_no_hetero_file_is_fine(make_repo: MakeRepo) -> None:
    assert hetero.check_hetero(make_repo("none").path) == []


def test_local_error_constant_matches_findings() -> None:
    from flagbot.hooks import findings

    assert hetero.ERROR == findings.ERROR
