from __future__ import annotations

from pathlib import Path

import pytest

from flagbot.hooks import git
from flagbot.hooks.errors import UsageError
from tests.hooks.conftest import MakeRepo


def test_inherited_git_variables_are_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_DIR", "/elsewhere")
    monkeypatch.setenv("GIT_INDEX_FILE", "/elsewhere/index")
    monkeypatch.setenv("GIT_DIFF_OPTS", "-u9")
    monkeypatch.setenv("GIT_EXEC_PATH", "/usr/lib/git-core")
    env = git.clean_env()
    assert "GIT_DIR" not in env and "GIT_INDEX_FILE" not in env and "GIT_DIFF_OPTS" not in env
    assert env["GIT_EXEC_PATH"] == "/usr/lib/git-core"


def test_isolated_commands_ignore_user_configuration() -> None:
    env = git.clean_env(isolated=True)
    assert env["GIT_CONFIG_GLOBAL"] == "/dev/null" and env["GIT_CONFIG_NOSYSTEM"] == "1"


def test_pinned_settings_come_before_the_subcommand() -> None:
    argv = git.command(["log"], git_dir=Path("/x/.git"))
    assert argv[0] == "git" and argv[-3:] == ["--git-dir", "/x/.git", "log"]
    assert "core.abbrev=40" in argv and "diff.noprefix=false" in argv


def test_runner_ignores_git_dir_of_an_outer_hook(make_repo: MakeRepo, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo("runner")
    repo.write("a", "a\n")
    head = repo.commit("one")
    monkeypatch.setenv("GIT_DIR", str(tmp_path))
    assert git.out(["rev-parse", "HEAD"], cwd=repo.path) == head


def test_failed_command_raises_typed_error_with_details(make_repo: MakeRepo) -> None:
    repo = make_repo("fail")
    with pytest.raises(git.GitError) as err:
        git.run(["cat-file", "-p", "nope"], cwd=repo.path)
    assert err.value.cmd == ["cat-file", "-p", "nope"] and err.value.rc == 128
    assert b"nope" in err.value.stderr and isinstance(err.value, UsageError)


def test_toplevel_outside_a_repository_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not inside a git repository"):
        git.toplevel(tmp_path)


def test_resolve_commits_resolves_several_or_names_the_bad_one(make_repo: MakeRepo) -> None:
    repo = make_repo("resolve")
    repo.write("a", "a\n")
    one = repo.commit("one")
    repo.git("tag", "v1")
    assert git.resolve_commits(repo.path, ["v1", "HEAD"], whats=["base", "cur"]) == [one, one]
    with pytest.raises(UsageError, match="cur 'nope' is not a commit"):
        git.resolve_commits(repo.path, ["v1", "nope"], whats=["base", "cur"])


def test_ctrl_c_while_a_child_is_created_is_held_until_after() -> None:
    import os
    import signal

    from flagbot.hooks.git import interrupts_held

    before = signal.getsignal(signal.SIGINT)
    with interrupts_held() as caught:
        os.kill(os.getpid(), signal.SIGINT)  # would raise KeyboardInterrupt here otherwise
    assert caught == [signal.SIGINT]
    assert signal.getsignal(signal.SIGINT) is before
