from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from flagbot.hooks import cli
from flagbot.hooks.patches import make
from tests.hooks.conftest import MakeRepo, Repo, git_env


def patch(repo: Repo, *args: str) -> int:
    return cli.main(["-C", str(repo.path), "patch", *args])


@pytest.fixture
def work(vendor_repo: Repo, tmp_path: Path) -> Repo:
    return vendor_repo.copy(tmp_path / "work")


def stored(repo: Repo, dev: str = "A_X100") -> bytes:
    base8 = repo.rev("base")[:8]
    return (repo.path / f"hardwares/{dev}/{base8}/{base8}.patch").read_bytes()


def test_patch_writes_a_format_patch_series_with_base_and_full_index(work: Repo) -> None:
    assert patch(work, "--device-type", "A_X100", "--base-commit-id", "base") == 0
    data = stored(work)
    assert f"base-commit: {work.rev('base')}".encode() in data
    assert data.count(b"\nFrom ") + data.startswith(b"From ") == 4  # hardwares-only commit left out
    assert b"GIT binary patch" in data and b"rename from rename_me.py" in data
    assert b"new mode 100755" in data and b"deleted file mode" in data
    assert b"index 00000000000000000000" in data  # full 40-hex index lines


def test_patch_never_contains_hardwares(work: Repo) -> None:
    patch(work, "--device-type", "A_X100", "--base-commit-id", "base")
    assert b"hardwares/" not in stored(work).replace(b"hardwares/A_X100", b"")
    assert b"touch only hardwares" not in stored(work)


def test_patch_bytes_have_no_git_version(work: Repo) -> None:
    patch(work, "--device-type", "A_X100", "--base-commit-id", "base")
    assert b"\n-- \n" not in stored(work)


def test_git_am_of_the_stored_patch_rebuilds_cur_tree(work: Repo, tmp_path: Path) -> None:
    patch(work, "--device-type", "A_X100", "--base-commit-id", "base")
    patch_file = tmp_path / "p.patch"
    patch_file.write_bytes(stored(work))
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(work.path), str(clone)], check=True, env=git_env())
    other = Repo(clone)
    other.git("checkout", "-q", "--detach", "base")
    other.git("am", "-q", "--keep-cr", "--keep-non-patch", str(patch_file))
    diff = other.git("diff", "--name-only", "HEAD", "cur", "--", ".", ":(exclude)hardwares")
    assert diff == ""


def test_rerun_gives_identical_bytes_and_changes_nothing(work: Repo) -> None:
    patch(work, "--device-type", "A_X100", "--base-commit-id", "base")
    before, snap = stored(work), work.snapshot()
    mtime = os.stat(work.path / "hardwares").st_mtime_ns
    assert patch(work, "--device-type", "A_X100", "--base-commit-id", "base") == 0
    assert stored(work) == before and work.snapshot() == snap
    assert os.stat(work.path / "hardwares").st_mtime_ns == mtime


def test_user_config_and_environment_do_not_change_bytes(work: Repo, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    patch(work, "--device-type", "A_X100", "--base-commit-id", "base")
    clean = stored(work)
    home = tmp_path / "home"
    home.mkdir()
    (home / "attrs").write_text("* -diff\n*.py diff=cpp\n")
    (home / ".gitconfig").write_text(
        "[format]\n\tsignature = leaked\n\tnumbered = true\n\tsignOff = true\n\tthread = deep\n"
        "\tsubjectPrefix = LEAK\n\tcoverLetter = true\n\tattach\n\theaders = X-Leak: 1\n"
        "\tto = leak@x\n\tcc = leak@y\n\tfrom = Leak <l@x>\n\tsuffix = .leak\n"
        "[diff]\n\trenames = false\n\tnoprefix = true\n\tmnemonicPrefix = true\n\tcontext = 9\n"
        "\talgorithm = patience\n\tsubmodule = log\n\tinterHunkContext = 5\n"
        f"[core]\n\tabbrev = 8\n\tquotePath = false\n\tattributesFile = {home}/attrs\n")
    work.git("config", "format.signature", "repo-leak")
    work.git("config", "diff.noprefix", "true")
    (work.path / ".git/info/attributes").write_text("* binary\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_DIFF_OPTS", "--unified=9")
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'core.abbrev'='7'")
    (work.path / "hardwares/A_X100").rename(tmp_path / "moved-away")
    assert patch(work, "--device-type", "A_X100", "--base-commit-id", "base") == 0
    assert stored(work) == clean


def test_new_base_adds_a_folder_and_keeps_others(work: Repo) -> None:
    patch(work, "--device-type", "A_X100", "--base-commit-id", "base")
    second = work.rev("base~0")  # same base; then a later base
    assert second
    later = work.git("rev-list", "--reverse", "base..cur").split()[0]
    assert patch(work, "--device-type", "A_X100", "--base-commit-id", later) == 0
    folders = sorted(p.name for p in (work.path / "hardwares/A_X100").iterdir())
    assert folders == sorted([work.rev("base")[:8], later[:8]])


def test_dirty_tree_untracked_files_and_stash_survive(work: Repo) -> None:
    work.write("README.md", "stash me\n")
    work.git("stash", "-q")
    work.write("src/model.py", "uncommitted edit\n")
    work.git("add", "src/model.py")
    work.write("README.md", "unstaged edit\n")
    work.write("scratch_notes.txt", "untracked\n")
    snap = work.snapshot()
    assert patch(work, "--device-type", "A_X100", "--base-commit-id", "base") == 0
    after = work.snapshot()
    files = dict(after["files"])  # type: ignore[call-overload]
    files.pop(f"hardwares/A_X100/{work.rev('base')[:8]}/{work.rev('base')[:8]}.patch")
    after["files"], after["status"] = files, snap["status"]
    assert after == snap


def test_failure_leaves_repository_exactly_as_it_was(work: Repo) -> None:
    work.write("README.md", "dirty\n")
    snap = work.snapshot()
    assert patch(work, "--device-type", "A_X100", "--base-commit-id", "cur",
                 "--current-commit-id", "base") == 2
    assert work.snapshot() == snap


def test_works_for_a_user_without_git_identity(work: Repo, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(HOME=str(tmp_path), GIT_CONFIG_NOSYSTEM="1", EMAIL="")
    proc = subprocess.run([sys.executable, "-m", "flagbot.hooks.cli", "-C", str(work.path), "patch",
                           "--device-type", "A_X100", "--base-commit-id", "base"],
                          env=env, capture_output=True, cwd=Path(__file__).parents[2])
    assert proc.returncode == 0, proc.stderr
    assert stored(work)


def test_merge_commit_in_range_is_squashed_into_one_mail(make_repo: MakeRepo,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo("merge")
    repo.write("a.txt", "a\n")
    base = repo.commit("base")
    repo.git("checkout", "-q", "-b", "side")
    repo.write("b.txt", "side\n")
    repo.commit("side work")
    repo.git("checkout", "-q", "main")
    repo.write("a.txt", "a\nmain\n")
    repo.commit("main work")
    repo.git("merge", "-q", "--no-ff", "-m", "merge side", "side")
    assert patch(repo, "--device-type", "A_X100", "--base-commit-id", base) == 0
    data = (repo.path / f"hardwares/A_X100/{base[:8]}/{base[:8]}.patch").read_bytes()
    assert data.count(b"Subject: ") == 1 and b"merge side" in data
    assert "squashed" in capsys.readouterr().out


def test_submodule_pointer_change_round_trips(make_repo: MakeRepo) -> None:
    repo = make_repo("sub")
    repo.write("a.txt", "a\n")
    repo.git("add", "a.txt")
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},third_party/lib")
    repo.git("commit", "-q", "-m", "base with submodule", env=git_env())
    base = repo.rev("HEAD")
    repo.git("update-index", "--cacheinfo", f"160000,{'2' * 40},third_party/lib")
    repo.git("commit", "-q", "-m", "bump submodule", env=git_env())
    assert patch(repo, "--device-type", "A_X100", "--base-commit-id", base) == 0
    data = (repo.path / f"hardwares/A_X100/{base[:8]}/{base[:8]}.patch").read_bytes()
    assert b"+Subproject commit " + b"2" * 40 in data


def test_non_utf8_commit_message_round_trips(make_repo: MakeRepo) -> None:
    repo = make_repo("latin")
    repo.write("a.txt", "a\n")
    base = repo.commit("base")
    repo.write("a.txt", "b\n")
    repo.git("-c", "i18n.commitEncoding=ISO-8859-1", "commit", "-q", "-am", "x",
             env=git_env())
    repo.git("-c", "i18n.commitEncoding=ISO-8859-1", "commit", "-q", "--amend", "-F", "-",
             env=git_env(), input=b"caf\xe9 au lait\n")
    assert patch(repo, "--device-type", "A_X100", "--base-commit-id", base) == 0


@pytest.mark.parametrize("message, reason", [
    ("fix things\n\nsee below\n---\nnot a diff\n", "diff starts"),
    ("[PATCH] already prefixed\n", "PATCH"),
    ("first line\nsecond line of subject\n", "spans several lines"),
])
def test_commit_message_that_would_not_survive_is_refused(
        make_repo: MakeRepo, message: str, reason: str, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo("msg")
    repo.write("a.txt", "a\n")
    base = repo.commit("base")
    repo.write("a.txt", "b\n")
    repo.commit(message)
    assert patch(repo, "--device-type", "A_X100", "--base-commit-id", base) == 1
    assert reason in capsys.readouterr().err
    assert not (repo.path / "hardwares").exists()


def test_vendor_bracket_tag_in_subject_survives(work: Repo) -> None:
    assert patch(work, "--device-type", "A_X100", "--base-commit-id", "base") == 0
    assert b"Subject: [PATCH 1/4] [Vendor] adapt" in stored(work)


@pytest.mark.parametrize("args", [
    ["--device-type", "AX100", "--base-commit-id", "base"],
    ["--device-type", "A_X100/../B_Y", "--base-commit-id", "base"],
    ["--device-type", "A X100", "--base-commit-id", "base"],
    ["--device-type", "A_X100", "--base-commit-id", "../base"],
    ["--device-type", "A_X100", "--base-commit-id", "base", "--current-commit-id", "a..b"],
    ["--device-type", "A_X100", "--base-commit-id", "a/b"],
    ["--device-type", "A_X100", "A_X100", "--base-commit-id", "base"],
    ["--base-commit-id", "base"],
])
def test_bad_arguments_are_usage_errors(vendor_repo: Repo, args: list[str]) -> None:
    # argparse errors and our own validation both end as exit 2 with the repo untouched
    snap = vendor_repo.snapshot()
    assert patch(vendor_repo, *args) == 2
    assert vendor_repo.snapshot() == snap


@pytest.mark.parametrize("base, cur, text", [
    ("0123abcd", "HEAD", "is not a commit"),
    ("cur", "base", "is not an ancestor"),
    ("cur", "cur", "no changes"),
    ("cur~1", "cur", "no changes"),  # only hardwares/ changed
])
def test_bad_ranges_are_refused(vendor_repo: Repo, base: str, cur: str, text: str,
                                capsys: pytest.CaptureFixture[str]) -> None:
    snap = vendor_repo.snapshot()
    assert patch(vendor_repo, "--device-type", "A_X100", "--base-commit-id", base,
                 "--current-commit-id", cur) == 2
    assert text in capsys.readouterr().err
    assert vendor_repo.snapshot() == snap


def test_not_a_git_repository_is_a_usage_error(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["-C", str(tmp_path), "patch", "--device-type", "A_X100",
                     "--base-commit-id", "abcd"]) == 2
    assert "not inside a git repository" in capsys.readouterr().err


def test_ambiguous_commit_prefix_is_a_usage_error(make_repo: MakeRepo,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo("ambiguous")
    stream = b"".join(b"commit refs/heads/main\nmark :%d\ncommitter C <c@x> %d +0000\n"
                      b"data 2\n%d\n" % (i + 1, 1_700_000_000 + i, i % 10) + (
                          b"from :%d\n" % i if i else b"") for i in range(700))
    repo.git("fast-import", "--quiet", input=stream)
    ids = repo.git("rev-list", "main").split()
    seen: dict[str, str] = {}
    prefix = next(i[:4] for i in ids if seen.setdefault(i[:4], i) != i)
    assert patch(repo, "--device-type", "A_X100", "--base-commit-id", prefix) == 2
    assert "ambiguous" in capsys.readouterr().err


def test_library_entry_reports_counts(work: Repo) -> None:
    result = make.make_patch(work.path, ["A_X100"], "base", "cur")
    assert result.mails == 4 and not result.squashed
    assert result.written == [result.patch_rel]


def test_configured_hardwares_folder_is_used(work: Repo) -> None:
    work.write(".github/flagbot.yml", "hardwares: vendor_patches\n")
    work.commit("config")
    assert patch(work, "--device-type", "A_X100", "--base-commit-id", "base") == 0
    base8 = work.rev("base")[:8]
    data = (work.path / f"vendor_patches/A_X100/{base8}/{base8}.patch").read_bytes()
    assert b".github/flagbot.yml" in data and b"hardwares/Z_Z1" in data


def test_unusual_author_survives_and_is_kept(make_repo: MakeRepo) -> None:
    repo = make_repo("author")
    repo.write("a.txt", "a\n")
    base = repo.commit("base")
    repo.write("a.txt", "b\n")
    repo.git("commit", "-q", "-am", "by someone else",
             env=git_env(GIT_AUTHOR_NAME="J\u00f6rg M\u00fcller, Jr",
                         GIT_AUTHOR_DATE="Tue, 25 Nov 2025 10:00:00 -0730"))
    assert patch(repo, "--device-type", "A_X100", "--base-commit-id", base) == 0


def test_author_that_a_mail_changes_is_refused(make_repo: MakeRepo,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo("bad-author")
    repo.write("a.txt", "a\n")
    base = repo.commit("base")
    repo.write("a.txt", "b\n")
    repo.git("commit", "-q", "-am", "quoted name", env=git_env(GIT_AUTHOR_NAME='J\u00f6rg "JJ" M\u00fcller, Jr'))
    assert patch(repo, "--device-type", "A_X100", "--base-commit-id", base) == 1
    assert "author does not survive" in capsys.readouterr().err


def test_corrupt_hetero_file_is_a_usage_error_and_nothing_is_written(
        work: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    patch(work, "--device-type", "A_X100", "--base-commit-id", "base")
    work.write("hardwares/hetero.txt", "not a hetero line\n")
    snap = work.snapshot()
    assert patch(work, "--device-type", "A_X100", "B_Y100", "--base-commit-id", "base") == 2
    assert "hetero.txt: line 1" in capsys.readouterr().err and work.snapshot() == snap


def test_hetero_line_merges_into_an_existing_file(work: Repo) -> None:
    base8 = work.rev("base")[:8]
    work.write("hardwares/hetero.txt", "# vendors\n00000000: C_Z1 D_Z1\n")
    patch(work, "--device-type", "A_X100", "--base-commit-id", "base")
    assert patch(work, "--device-type", "A_X100", "B_Y100", "--base-commit-id", "base") == 0
    assert (work.path / "hardwares/hetero.txt").read_text() == (
        f"# vendors\n00000000: C_Z1 D_Z1\n{base8}: A_X100 B_Y100\n")
    assert (work.path / f"hardwares/B_Y100/{base8}/{base8}.patch").read_bytes() == stored(work)


def test_a_branch_name_with_folders_is_a_current_commit(work: Repo) -> None:
    work.git("branch", "vendor/A_X100", "cur")
    assert patch(work, "--device-type", "A_X100", "--base-commit-id", "base",
                 "--current-commit-id", "vendor/A_X100") == 0
    by_branch = stored(work)
    assert patch(work, "--device-type", "A_X100", "--base-commit-id", "base",
                 "--current-commit-id", "cur") == 0
    assert stored(work) == by_branch


@pytest.mark.parametrize("rev", ["vendor//A", "vendor/", "vendor/.hidden", "/abs", "-x/y"])
def test_odd_ref_names_with_slashes_are_refused(work: Repo, rev: str) -> None:
    assert patch(work, "--device-type", "A_X100", "--base-commit-id", "base",
                 "--current-commit-id", rev) == 2
