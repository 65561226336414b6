from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from flagbot.hooks import cli
from flagbot.hooks.patches import make
from tests.hooks.conftest import MakeRepo, Repo, git_env


@pytest.fixture(scope="module")
def patched(vendor_repo: Repo, tmp_path_factory: pytest.TempPathFactory) -> Repo:
    repo = vendor_repo.copy(tmp_path_factory.mktemp("unpatch") / "src")
    make.make_patch(repo.path, ["A_X100"], "base", "cur")
    return repo


@pytest.fixture
def work(patched: Repo, tmp_path: Path) -> Repo:
    return patched.copy(tmp_path / "src")


def unpatch(repo: Repo, *args: str) -> int:
    return cli.main(["-C", str(repo.path), "unpatch", *args])


def build_of(repo: Repo, dev: str = "A_X100", folder: str = "build") -> Repo:
    return Repo(repo.path / folder / dev / repo.path.name)


def test_build_is_base_plus_vendor_commits_with_authors_dates_and_messages(work: Repo) -> None:
    assert unpatch(work, "--device-type", "A_X100", "--commit-id", work.rev("base")[:4]) == 0
    build = build_of(work)
    fmt = "--format=%an|%ae|%ad|%B"
    assert build.git("log", fmt, "HEAD~4..HEAD") == work.git("log", fmt, "base..cur~1")
    assert build.git("diff", "--name-only", "HEAD", work.rev("cur"), "--", ".", ":(exclude)hardwares") == ""
    assert build.git("status", "--porcelain") == ""
    assert build.git("symbolic-ref", "HEAD") == "refs/heads/A_X100"
    assert (build.path / "run.sh").stat().st_mode & 0o111
    assert (build.path / "crlf.txt").read_bytes() == b"one\r\ntwo \r\nthree\t \r\n"


def test_build_registers_nothing_in_the_source(work: Repo) -> None:
    snap = work.snapshot()
    unpatch(work, "--device-type", "A_X100", "--commit-id", work.rev("base")[:8])
    after = work.snapshot()
    assert {k: v for k, v in after.items() if k not in ("files", "status")} == {
        k: v for k, v in snap.items() if k not in ("files", "status")}
    assert str(after["status"]).splitlines() == sorted(
        [*str(snap["status"]).splitlines(), f"?? build/A_X100/{work.path.name}/"])


def test_build_is_standalone_and_survives_gc_prune_in_source(work: Repo) -> None:
    unpatch(work, "--device-type", "A_X100", "--commit-id", work.rev("base")[:8])
    build = build_of(work)
    assert not (build.path / ".git/objects/info/alternates").exists()
    work.git("gc", "-q", "--prune=now")
    build.git("fsck", "--full", "--no-dangling")
    assert build.git("rev-list", "--count", "HEAD") == "5"


def test_works_for_a_user_without_git_identity(work: Repo, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(HOME=str(tmp_path), GIT_CONFIG_NOSYSTEM="1", EMAIL="")
    proc = subprocess.run([sys.executable, "-m", "flagbot.hooks.cli", "-C", str(work.path), "unpatch",
                           "--device-type", "A_X100", "--commit-id", work.rev("base")[:6]],
                          env=env, capture_output=True, cwd=Path(__file__).parents[2])
    assert proc.returncode == 0, proc.stderr


def test_rerun_replaces_an_untouched_build_with_identical_commits(work: Repo) -> None:
    unpatch(work, "--device-type", "A_X100", "--commit-id", work.rev("base")[:8])
    first = build_of(work).rev("HEAD")
    assert unpatch(work, "--device-type", "A_X100", "--commit-id", work.rev("base")[:8]) == 0
    assert build_of(work).rev("HEAD") == first
    assert not [p for p in (work.path / "build/A_X100").iterdir() if p.name != work.path.name]


@pytest.mark.parametrize("change", ["edit", "untracked", "commit"])
def test_build_with_local_changes_is_refused_unless_forced(work: Repo, change: str) -> None:
    base8 = work.rev("base")[:8]
    unpatch(work, "--device-type", "A_X100", "--commit-id", base8)
    build = build_of(work)
    build.write("README.md" if change != "untracked" else "mine.txt", "local work\n")
    if change == "commit":
        build.commit("local commit")
    assert unpatch(work, "--device-type", "A_X100", "--commit-id", base8) == 2
    assert (build.path / ("mine.txt" if change == "untracked" else "README.md")).exists()
    assert unpatch(work, "--device-type", "A_X100", "--commit-id", base8, "--force") == 0
    assert not (build.path / "mine.txt").exists()


def test_dir_option_is_relative_to_the_top_level(work: Repo) -> None:
    (work.path / "src").mkdir(exist_ok=True)
    assert cli.main(["-C", str(work.path / "src"), "unpatch", "--device-type", "A_X100",
                     "--commit-id", work.rev("base")[:8], "--dir", "out"]) == 0
    assert (work.path / "out/A_X100" / work.path.name / ".git").is_dir()


@pytest.mark.parametrize("prefix, text", [("ffff", "no stored base"), ("abcd", "ambiguous")])
def test_absent_or_ambiguous_base_lists_candidates(work: Repo, prefix: str, text: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    for base8 in ("abcd1111", "abcd2222"):
        work.write(f"hardwares/A_X100/{base8}/{base8}.patch",
                   f"base-commit: {base8}{'0' * 32}\n")
    assert unpatch(work, "--device-type", "A_X100", "--commit-id", prefix) == 2
    err = capsys.readouterr().err
    assert text in err and "abcd1111" in err


@pytest.mark.parametrize("args", [
    ["--device-type", "A_X100", "--commit-id", "abc"],
    ["--device-type", "A_X100", "--commit-id", "../abcd"],
    ["--device-type", "A_X100", "--commit-id", "zzzz"],
    ["--device-type", "../A_X100", "--commit-id", "abcd"],
    ["--device-type", "B_Y100", "--commit-id", "abcd"],
])
def test_bad_arguments_are_usage_errors(patched: Repo, args: list[str]) -> None:
    assert unpatch(patched, *args) == 2


def test_patch_that_does_not_apply_names_file_and_keeps_old_build(work: Repo,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    base8 = work.rev("base")[:8]
    unpatch(work, "--device-type", "A_X100", "--commit-id", base8)
    head = build_of(work).rev("HEAD")
    path = work.path / f"hardwares/A_X100/{base8}/{base8}.patch"
    path.write_bytes(path.read_bytes().replace(b" line 1\n", b" line one\n", 1))
    assert unpatch(work, "--device-type", "A_X100", "--commit-id", base8) == 1
    err = capsys.readouterr().err
    assert "src/model.py" in err and f"{base8}.patch:" in err
    assert build_of(work).rev("HEAD") == head


def test_heterogeneous_flow_end_to_end(make_repo: MakeRepo, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo("hetero")
    repo.write("core.py", "core\n")
    base = repo.commit("upstream")
    repo.git("checkout", "-q", "-b", "vendor-a")
    repo.write("a_kernels.py", "A\n")
    repo.commit("vendor A adaptation")
    assert cli.main(["-C", str(repo.path), "patch", "--device-type", "B_Y100", "A_X100",
                     "--base-commit-id", base]) == 2
    assert "B_Y100" in capsys.readouterr().err
    assert make.make_patch(repo.path, ["A_X100"], base).mails == 1
    repo.commit("add A's patch")
    repo.git("checkout", "-q", "-b", "vendor-b", base)
    repo.git("checkout", "-q", "vendor-a", "--", "hardwares")
    repo.write("b_kernels.py", "B\n")
    repo.commit("vendor B adaptation")
    assert cli.main(["-C", str(repo.path), "patch", "--device-type", "A_X100", "B_Y100",
                     "--base-commit-id", base[:10]]) == 0
    assert (repo.path / "hardwares/hetero.txt").read_text() == f"{base[:8]}: A_X100 B_Y100\n"
    assert cli.main(["-C", str(repo.path), "hetero", "check"]) == 0
    assert cli.main(["-C", str(repo.path), "unpatch", "--device-type", "A_X100", "B_Y100",
                     "--commit-id", base[:4]]) == 0
    a, b = build_of(repo, "A_X100"), build_of(repo, "B_Y100")
    assert (a.path / "a_kernels.py").exists() and not (a.path / "b_kernels.py").exists()
    assert (b.path / "b_kernels.py").exists() and not (b.path / "a_kernels.py").exists()


def test_heterogeneous_unpatch_needs_the_hetero_line(work: Repo,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    base8 = work.rev("base")[:8]
    src = work.path / f"hardwares/A_X100/{base8}/{base8}.patch"
    work.write(f"hardwares/B_Y100/{base8}/{base8}.patch", src.read_bytes())
    assert unpatch(work, "--device-type", "A_X100", "B_Y100", "--commit-id", base8) == 2
    assert "hetero.txt does not list" in capsys.readouterr().err


def test_git_env_helper_is_pinned() -> None:
    assert git_env()["GIT_CONFIG_GLOBAL"] == os.devnull


def test_corrupt_patch_file_is_refused_and_named(work: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    base8 = work.rev("base")[:8]
    (work.path / f"hardwares/A_X100/{base8}/{base8}.patch").write_bytes(
        b"base-commit: " + work.rev("base").encode() + b"\n\x00garbage\n")
    assert unpatch(work, "--device-type", "A_X100", "--commit-id", base8) == 1
    assert "not a format-patch series" in capsys.readouterr().err
    assert not (work.path / "build").exists()


def test_leftovers_of_a_killed_build_are_removed(work: Repo) -> None:
    stale = work.path / "build/A_X100" / f".{work.path.name}.flagbot-killed"
    (stale / "x").mkdir(parents=True)
    assert unpatch(work, "--device-type", "A_X100", "--commit-id", work.rev("base")[:8]) == 0
    assert not stale.exists()


def test_a_hand_edited_patch_builds_with_a_warning_naming_the_files(
        work: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    base8 = work.rev("base")[:8]
    path = work.path / f"hardwares/A_X100/{base8}/{base8}.patch"
    data = path.read_bytes()
    assert b"+tail 2\n" in data
    path.write_bytes(data.replace(b"+tail 2\n", b"+tail 2 edited\n", 1))
    assert unpatch(work, "--device-type", "A_X100", "--commit-id", base8) == 0
    err = capsys.readouterr().err
    assert "edited by hand" in err and "src/model.py" in err and "flagbot migrate" in err
    assert "tail 2 edited" in (build_of(work).path / "src/model.py").read_text()


def test_a_generated_patch_builds_without_a_warning(work: Repo,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert unpatch(work, "--device-type", "A_X100", "--commit-id", work.rev("base")[:8]) == 0
    assert "edited by hand" not in capsys.readouterr().err
