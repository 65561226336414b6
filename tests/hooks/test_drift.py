"""Drift of stored patches onto a moving default branch, in real repositories."""

from __future__ import annotations

from flagbot.hooks.patch_cmd import main as patch_main
from flagbot.hooks.patches.drift import check_drift
from tests.hooks.conftest import MakeRepo, Repo

CORE = "".join(f"line {i}\n" for i in range(30))


def vendor_repo(make_repo: MakeRepo) -> tuple[Repo, str]:
    """main with A_X100 (two hunks in src/core.py) and B_Y100 (src/other.py) patches stored,
    both listed for the base in hetero.txt; returns (repo, base)."""
    repo = make_repo("drift")
    repo.write("src/core.py", CORE)
    repo.write("src/other.py", "a\nb\nc\n")
    repo.write("hardwares/.keep", "")
    base = repo.commit("upstream")
    stored = {}
    for device, rel, text in (("A_X100", "src/core.py", CORE.replace("line 5\n", "line 5 ax\n")
                                                          .replace("line 25\n", "line 25 ax\n")),
                              ("B_Y100", "src/other.py", "a\nb by\nc\n")):
        repo.git("checkout", "-q", "-b", f"v-{device}", base)
        repo.write(rel, text)
        cur = repo.commit(f"{device} adaptation")
        assert patch_main(["--device-type", device, "--base-commit-id", base,
                           "--current-commit-id", cur], cwd=str(repo.path)) == 0
        patch = f"hardwares/{device}/{base[:8]}/{base[:8]}.patch"
        stored[patch] = (repo.path / patch).read_bytes()
        (repo.path / patch).unlink()
        repo.git("checkout", "-q", "main")
    for patch, data in stored.items():
        repo.write(patch, data)
    repo.write("hardwares/hetero.txt", f"{base[:8]}: A_X100 B_Y100\n")
    repo.commit("store the vendor patches")
    return repo, base


def test_patches_that_still_apply_report_nothing(make_repo: MakeRepo) -> None:
    repo, base = vendor_repo(make_repo)
    repo.write("README.md", "unrelated\n")
    head = repo.commit("docs")
    report = check_drift(repo.path, head)
    assert report.drifted == [] and report.hetero == [] and report.skipped == []
    assert report.checked == [f"hardwares/A_X100/{base[:8]}/{base[:8]}.patch",
                              f"hardwares/B_Y100/{base[:8]}/{base[:8]}.patch"]


def test_a_conflicting_commit_names_the_file_the_hunk_and_since_when(make_repo: MakeRepo) -> None:
    repo, base = vendor_repo(make_repo)
    before = repo.snapshot()
    repo.write("README.md", "unrelated\n")
    repo.commit("docs")
    repo.write("src/core.py", CORE.replace("line 5\n", "line 5 upstream\n"))
    culprit = repo.commit("upstream rewrites line 5")
    repo.write("README.md", "more\n")
    head = repo.commit("docs again")
    before = repo.snapshot()
    report = check_drift(repo.path, head)
    assert repo.snapshot() == before  # nothing written to the repository
    assert report.drifted_devices() == ["A_X100"]
    (drift,) = report.drifted
    assert (drift.base8, drift.mail, drift.mails, drift.since) == (base[:8], 1, 1, culprit)
    (conflict,) = drift.conflicts
    assert conflict.path == "src/core.py"
    assert len(conflict.hunks) == 1 and conflict.hunks[0].startswith("@@ -3,")  # line 25's applies
    (hset,) = report.hetero
    assert (hset.base8, hset.devices, hset.drifted, hset.missing) == (
        base[:8], ("A_X100", "B_Y100"), ("A_X100",), ())


def test_a_hetero_entry_without_a_members_patch_is_a_broken_set(make_repo: MakeRepo) -> None:
    repo, base = vendor_repo(make_repo)
    repo.write("hardwares/hetero.txt", f"{base[:8]}: A_X100 B_Y100 C_Z100\n")
    head = repo.commit("list C_Z100 too")
    report = check_drift(repo.path, head)
    assert report.drifted == []
    assert [(s.drifted, s.missing) for s in report.hetero] == [((), ("C_Z100",))]
