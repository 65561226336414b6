from __future__ import annotations

import json
from pathlib import Path

import pytest

from flagbot.hooks import cli
from flagbot.hooks.patches import make, verify
from tests.hooks.conftest import Repo

GOLDEN = Path(__file__).parents[2] / "testing/resources/patches"


@pytest.fixture(scope="module")
def patched(vendor_repo: Repo, tmp_path_factory: pytest.TempPathFactory) -> Repo:
    repo = vendor_repo.copy(tmp_path_factory.mktemp("verify") / "repo")
    make.make_patch(repo.path, ["A_X100"], "base", "cur")
    return repo


def rel(repo: Repo) -> str:
    base8 = repo.rev("base")[:8]
    return f"hardwares/A_X100/{base8}/{base8}.patch"


def tampered(repo: Repo, tmp_path: Path, old: bytes, new: bytes, dest: str | None = None) -> Repo:
    work = repo.copy(tmp_path / "t")
    path = work.path / rel(work)
    data = path.read_bytes()
    assert old in data
    target = work.path / (dest or rel(work))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data.replace(old, new, 1))
    return work


def rules(findings: list) -> list[str]:  # type: ignore[type-arg]
    return [f.rule for f in findings]


def test_generated_patch_matches_the_golden_bytes(patched: Repo) -> None:
    assert (patched.path / rel(patched)).read_bytes() == (GOLDEN / "vendor_A_X100.patch").read_bytes()


def test_stored_patch_verifies_clean_and_writes_nothing(patched: Repo) -> None:
    snap = patched.snapshot()
    objects = sorted((patched.path / ".git/objects").rglob("*"))
    assert verify.find_patches(patched.path) == [rel(patched), "hardwares/Z_Z1/deadbeef/deadbeef.patch"]
    assert verify.verify_patch(patched.path, rel(patched)) == []
    assert patched.snapshot() == snap and sorted((patched.path / ".git/objects").rglob("*")) == objects


def test_changed_context_line_fails_to_apply_and_names_the_file(patched: Repo, tmp_path: Path) -> None:
    work = tampered(patched, tmp_path, b" line 1\n", b" line one\n")
    findings = verify.verify_patch(work.path, rel(work))
    assert rules(findings) == ["patch-apply"] and "src/model.py" in findings[0].message
    lines = (work.path / rel(work)).read_bytes().split(b"\n")
    assert lines[findings[0].line - 1].startswith((b"@@", b"diff --git"))


def test_abbreviated_index_line_is_not_canonical(patched: Repo, tmp_path: Path) -> None:
    data = (patched.path / rel(patched)).read_bytes()
    line = next(x for x in data.split(b"\n") if x.startswith(b"index ") and b"0000000" not in x)
    old, new = line.split(b" ")[1].split(b"..")
    short = b"index " + old[:9] + b".." + new[:9] + line[len(b"index ") + 82:]
    work = tampered(patched, tmp_path, line, short)
    assert rules(verify.verify_patch(work.path, rel(work))) == ["patch-bytes"]


def test_version_signature_is_not_canonical(patched: Repo, tmp_path: Path) -> None:
    data = (patched.path / rel(patched)).read_bytes()
    work = tampered(patched, tmp_path, data[-40:], data[-40:] + b"-- \n2.39.5\n\n")
    assert rules(verify.verify_patch(work.path, rel(work))) == ["patch-bytes"]


def test_hand_edited_hunk_is_called_hand_edited_like_migrate_does(patched: Repo,
                                                                  tmp_path: Path) -> None:
    work = tampered(patched, tmp_path, b"+tail 2\n", b"+tail 2 edited\n")
    (finding,) = verify.verify_patch(work.path, rel(work))
    assert finding.rule == "patch-bytes"
    assert finding.message.startswith("hand-edited? src/model.py: index line says ")
    assert "flagbot migrate" in finding.message


def test_a_generated_but_not_canonical_patch_is_not_called_hand_edited(patched: Repo,
                                                                       tmp_path: Path) -> None:
    data = (patched.path / rel(patched)).read_bytes()
    work = tampered(patched, tmp_path, data[-40:], data[-40:] + b"-- \n2.39.5\n\n")
    (finding,) = verify.verify_patch(work.path, rel(work))
    assert "hand-edited" not in finding.message and "flagbot migrate" in finding.message


def test_message_that_git_am_cuts_is_a_round_trip_error(patched: Repo, tmp_path: Path) -> None:
    work = tampered(patched, tmp_path, b"Longer explanation", b"---\nLonger explanation")
    assert rules(verify.verify_patch(work.path, rel(work))) == ["patch-roundtrip"]


def test_folder_not_matching_base_commit_is_a_layout_error(patched: Repo, tmp_path: Path) -> None:
    work = patched.copy(tmp_path / "w")
    (work.path / "hardwares/A_X100/0badc0de").mkdir()
    (work.path / rel(work)).rename(work.path / "hardwares/A_X100/0badc0de/0badc0de.patch")
    findings = verify.check_layout(work.path)
    assert "patch-layout" in rules(findings) and "0badc0de" in findings[0].message


@pytest.mark.parametrize("content, rule", [
    (b"just some text\n", "patch-corrupt"),
    (b"From " + b"1" * 40 + b" Mon Sep 17 00:00:00 2001\nFrom: a <b>\nSubject: x\n\n---\n", "patch-old-format"),
    (b"From " + b"1" * 40 + b" Mon Sep 17 00:00:00 2001\nFrom: a <b>\nSubject: x\n\n---\n"
     b"diff --git a/x.bin b/x.bin\nBinary files a/x.bin and b/x.bin differ\n", "patch-corrupt"),
])
def test_garbage_or_missing_base_line_is_reported(patched: Repo, tmp_path: Path,
                                                  content: bytes, rule: str) -> None:
    work = patched.copy(tmp_path / "w")
    (work.path / rel(work)).write_bytes(content)
    assert rule in rules(verify.verify_patch(work.path, rel(work)))


def test_unreadable_patch_is_corrupt(patched: Repo, tmp_path: Path) -> None:
    work = patched.copy(tmp_path / "w")
    (work.path / "hardwares/B_Y100/12345678/12345678.patch").mkdir(parents=True)
    assert rules(verify.verify_patch(work.path, "hardwares/B_Y100/12345678/12345678.patch")) == [
        "patch-corrupt"]


def test_missing_base_is_an_error_or_a_single_warning(patched: Repo, tmp_path: Path) -> None:
    base = patched.rev("base").encode()
    fake = b"abcdef01" + b"2" * 32
    work = tampered(patched, tmp_path, b"base-commit: " + base, b"base-commit: " + fake,
                    dest="hardwares/A_X100/abcdef01/abcdef01.patch")
    target = "hardwares/A_X100/abcdef01/abcdef01.patch"
    assert [(f.rule, f.severity) for f in verify.verify_patch(work.path, target)] == [
        ("base-unavailable", "error")]
    only = verify.verify_patch(work.path, target, allow_missing_base=True)
    assert [(f.rule, f.severity) for f in only] == [("base-unavailable", "warning")]


def test_a_missing_base_in_a_full_clone_is_not_told_to_unshallow(patched: Repo,
                                                                 tmp_path: Path) -> None:
    fake = b"abcdef01" + b"2" * 32
    work = tampered(patched, tmp_path, b"base-commit: " + patched.rev("base").encode(),
                    b"base-commit: " + fake, dest="hardwares/A_X100/abcdef01/abcdef01.patch")
    [finding] = verify.verify_patch(work.path, "hardwares/A_X100/abcdef01/abcdef01.patch")
    assert "unshallow" not in finding.message
    assert "another repository's history" in finding.message and "git fetch URL abcdef01" in finding.message


def test_a_missing_base_in_a_shallow_clone_is_told_to_unshallow(patched: Repo, tmp_path: Path) -> None:
    work = patched.copy(tmp_path / "full")
    work.commit("store the patch")
    shallow = Repo(tmp_path / "shallow")
    work.git("clone", "-q", "--depth", "1", f"file://{work.path}", str(shallow.path))
    [finding] = verify.verify_patch(shallow.path, rel(work))
    assert finding.rule == "base-unavailable" and "git fetch --unshallow" in finding.message


def test_verify_command_exit_codes_and_json(patched: Repo, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["-C", str(patched.path), "verify", rel(patched)]) == 0
    capsys.readouterr()
    work = tampered(patched, tmp_path, b" line 1\n", b" line one\n")
    assert cli.main(["-C", str(work.path), "verify", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["errors"] >= 1 and doc["findings"][0]["rule"] in ("patch-apply", "patch-layout")


def test_verify_patch_argument_outside_repo_is_a_usage_error(patched: Repo) -> None:
    assert cli.main(["-C", str(patched.path), "verify", "/etc/hostname"]) == 2


def test_verify_in_flagbots_own_checkout_gives_advice_that_works_there(
        capsys: pytest.CaptureFixture[str]) -> None:
    from flagbot.hooks import git

    root = Path(__file__).parents[2]  # hardwares/ holds the example upstream's patches
    assert cli.main(["-C", str(root), "verify"]) == 1
    out = capsys.readouterr().out
    if git.is_shallow(root):  # a CI checkout of depth 1
        assert "git fetch --unshallow" in out
    else:
        assert "unshallow" not in out and "another repository's history" in out
