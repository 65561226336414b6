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


def _findings(make_repo: MakeRepo, name: str, text: str) -> list[tuple[int, str, str]]:
    repo = make_repo(name)
    repo.write("hardwares/hetero.txt", text)
    for base in ("aaaa1111", "bbbb2222", "cccc3333"):
        for dev in ("A_X100", "B_Y100"):
            repo.write(f"hardwares/{dev}/{base}/{base}.patch", "x\n")
    return [(f.line, f.rule, f.message) for f in hetero.check_hetero(repo.path)]


def test_an_unsorted_line_is_reported_beside_a_broken_one(make_repo: MakeRepo) -> None:
    found = _findings(make_repo, "hetero-both", "cccc3333: A_X100\nnot a line\naaaa1111: A_X100\n")
    assert [(line, rule) for line, rule, _ in found] == [(2, "hetero-format"), (3, "hetero-order")]


def test_a_device_twice_on_one_line_is_a_duplicate_with_the_line_to_write(
        make_repo: MakeRepo) -> None:
    found = _findings(make_repo, "hetero-twice", "aaaa1111: A_X100 A_X100\n")
    assert found == [(1, "hetero-duplicate",
                      "A_X100 listed twice for base aaaa1111; write `aaaa1111: A_X100`")]


@pytest.mark.parametrize(("line", "rule", "why"), [
    ("aaaa1111: B_Y100 A_X100", "hetero-order", "devices not in sorted order"),
    ("aaaa1111:  A_X100\tB_Y100", "hetero-format", "spacing"),
    ("aaaa1111 : A_X100 B_Y100", "hetero-format", "spacing"),
])
def test_a_non_canonical_line_names_its_rule_and_shows_the_canonical_line(
        make_repo: MakeRepo, line: str, rule: str, why: str) -> None:
    found = _findings(make_repo, f"hetero-{rule}", line + "\n")
    assert len(found) == 1 and found[0][:2] == (1, rule)
    assert why in found[0][2] and found[0][2].endswith("write `aaaa1111: A_X100 B_Y100`")


def test_blank_lines_around_the_entries_are_a_layout_finding(make_repo: MakeRepo) -> None:
    found = _findings(make_repo, "hetero-layout", "\naaaa1111: A_X100\n\n")
    assert [rule for _, rule, _ in found] == ["hetero-format"]
    assert "file layout" in found[0][2]
