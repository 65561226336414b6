"""Git workspaces: cached clones fetched incrementally, fork heads, no repository code ever runs."""

from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path

import pytest

from flagbot.bot.context import PullRequest
from flagbot.bot.work.workspace import GitWorkspace, WorkspaceError, auth_env, redact
from tests.bot.handlers_support import deliver, missing_patch_lines, open_pr, runs_by_name


def pull(emu, repo, number: int) -> PullRequest:
    return PullRequest.from_payload(emu.payload(event="pull_request", action="opened", repo=repo, number=number))


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def test_checkout_is_the_pr_head_and_goes_away_afterwards(emu, repo, tmp_path) -> None:
    open_pr(emu, repo, {"a.txt": "head\n"})
    ws = GitWorkspace(tmp_path / "cache", repo.full_name, repo.clone_url)
    with ws.checkout(pull(emu, repo, 1)) as tree:
        assert (tree / "a.txt").read_text() == "head\n"
        assert git("rev-parse", "HEAD", cwd=tree).strip() == pull(emu, repo, 1).head_sha
    assert not tree.exists()


def fetches_run(trace: Path) -> int:
    """`git fetch` commands git itself recorded in its trace2 event log."""
    if not trace.exists():
        return 0
    events = [json.loads(line) for line in trace.read_text().splitlines() if line.strip()]
    return sum(1 for e in events if e.get("event") == "start" and e.get("argv", [None, None])[1:2] == ["fetch"])


def test_second_checkout_fetches_only_what_is_new(emu, repo, tmp_path, monkeypatch) -> None:
    trace = tmp_path / "trace2.json"
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))  # git's own record of what it ran
    open_pr(emu, repo, {"a.txt": "1\n"})
    ws = GitWorkspace(tmp_path / "cache", repo.full_name, repo.clone_url)
    with ws.checkout(pull(emu, repo, 1)):
        pass
    assert fetches_run(trace) == 1  # base branch and PR head in one fetch
    with ws.checkout(pull(emu, repo, 1)):
        pass
    assert fetches_run(trace) == 1
    emu.push_commit(repo, branch="feature", files={"a.txt": "2\n"})
    emu.update_pull_head(repo, 1)
    with ws.checkout(pull(emu, repo, 1)) as tree:
        assert (tree / "a.txt").read_text() == "2\n"
    assert fetches_run(trace) == 2


def test_fork_head_is_fetched_from_the_fork_when_refs_pull_is_missing(emu, repo, tmp_path) -> None:
    fork = emu.fork_repo(repo, "bob/FlagScale")
    emu.push_commit(fork, branch="fix", files={"b.txt": "from fork\n"})
    emu.open_pull(repo, head="fix", head_repo=fork, user="bob")
    git("update-ref", "-d", "refs/pull/1/head", cwd=repo.bare_path)
    pr = pull(emu, repo, 1)
    assert pr.is_fork and pr.head_clone_url == fork.clone_url
    ws = GitWorkspace(tmp_path / "cache", repo.full_name, repo.clone_url)
    with ws.checkout(pr) as tree:
        assert (tree / "b.txt").read_text() == "from fork\n"


def test_pr_from_a_fork_gets_labels_and_checks(emu, settings, repo) -> None:
    fork = emu.fork_repo(repo, "bob/FlagScale")
    emu.push_commit(fork, branch="fix", files={"hardwares/hetero.txt": missing_patch_lines(1)})
    pr = emu.open_pull(repo, head="fix", head_repo=fork, user="bob")
    deliver(emu, settings, repo, pr["number"])
    assert runs_by_name(emu, repo, pr["head"]["sha"])["flagbot / patches"]["conclusion"] == "failure"


def test_missing_head_commit_names_the_pr_and_the_next_step(emu, repo, tmp_path) -> None:
    open_pr(emu, repo, {"a.txt": "1\n"})
    pr = pull(emu, repo, 1)
    gone = PullRequest(**{**pr.__dict__, "head_sha": "f" * 40})
    with pytest.raises(WorkspaceError, match=r"flagos/FlagScale#1: head commit f{40} not found"):
        with GitWorkspace(tmp_path / "cache", repo.full_name, repo.clone_url).checkout(gone):
            pass


def test_no_hook_runs_not_even_one_planted_in_the_cache_or_user_config(emu, repo, tmp_path, monkeypatch) -> None:
    marker = tmp_path / "hook-ran"
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    script = f"#!/bin/sh\ntouch {marker}\n"
    (hooks / "post-checkout").write_text(script)
    (hooks / "post-checkout").chmod(0o755)
    user_config = tmp_path / "gitconfig"
    user_config.write_text(f"[core]\n\thooksPath = {hooks}\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(user_config))
    open_pr(emu, repo, {"a.txt": "1\n"})
    ws = GitWorkspace(tmp_path / "cache", repo.full_name, repo.clone_url)
    ws.ensure()
    (ws.git_dir / "hooks").mkdir(exist_ok=True)
    (ws.git_dir / "hooks" / "post-checkout").write_text(script)
    (ws.git_dir / "hooks" / "post-checkout").chmod(0o755)
    with ws.checkout(pull(emu, repo, 1)):
        pass
    assert not marker.exists()


def test_symlinks_and_gitattributes_from_the_pr_are_inert(emu, repo, tmp_path) -> None:
    work = tmp_path / "w"
    git("clone", "-q", repo.clone_url, str(work), cwd=tmp_path)
    git("checkout", "-q", "-b", "evil", cwd=work)
    os.symlink("/etc/passwd", work / "leak.py")
    (work / ".gitattributes").write_text("* text eol=crlf\n")
    (work / "lf.txt").write_bytes(b"one\ntwo\n")
    git("add", "-A", cwd=work)
    git("commit", "-qm", "evil", cwd=work)
    git("push", "-q", "origin", "evil", cwd=work)
    emu.open_pull(repo, head="evil")
    ws = GitWorkspace(tmp_path / "cache", repo.full_name, repo.clone_url)
    with ws.checkout(pull(emu, repo, 1)) as tree:
        assert not (tree / "leak.py").is_symlink()
        assert (tree / "leak.py").read_text() == "/etc/passwd"
        assert (tree / "lf.txt").read_bytes() == b"one\ntwo\n"


def test_token_goes_only_to_the_repository_host_as_basic_auth() -> None:
    env = auth_env("https://github.example.com/o/r.git", "ghs_abc", "github.example.com")
    assert env["GIT_CONFIG_KEY_0"] == "http.extraHeader"
    assert base64.b64decode(env["GIT_CONFIG_VALUE_0"].split()[-1]) == b"x-access-token:ghs_abc"
    assert auth_env("https://evil.example/o/r.git", "ghs_abc", "github.example.com") == {}
    assert auth_env("file:///srv/r.git", "ghs_abc", "") == {}


def test_redact_drops_credentials_from_urls() -> None:
    assert redact("https://x-access-token:ghs_1@github.com/o/r.git") == "https://github.com/o/r.git"


def test_worktrees_left_by_a_killed_worker_are_cleared(emu, repo, tmp_path) -> None:
    open_pr(emu, repo, {"a.txt": "1\n"})
    ws = GitWorkspace(tmp_path / "cache", repo.full_name, repo.clone_url)
    ws.ensure()
    leftover = ws.trees / "1-deadbeef-0000"
    leftover.mkdir(parents=True)
    (leftover / "half-checked-out.txt").write_text("x")
    with ws.checkout(pull(emu, repo, 1)):
        assert not leftover.exists()
    assert list(ws.trees.iterdir()) == []


def test_an_unreachable_repository_is_a_workspace_error_with_gits_message(emu, repo, tmp_path) -> None:
    open_pr(emu, repo, {"a.txt": "1\n"})
    gone = str(tmp_path / "no-such-repo.git")
    ws = GitWorkspace(tmp_path / "cache", repo.full_name, gone)
    with pytest.raises(WorkspaceError, match=r"git fetch from .*no-such-repo.git failed: .*"
                                             r"(does not appear to be a git repository|not found)"):
        with ws.checkout(pull(emu, repo, 1)):
            pass


def test_the_cache_carries_the_safe_config(emu, repo, tmp_path) -> None:
    ws = GitWorkspace(tmp_path / "cache", repo.full_name, repo.clone_url)
    ws.ensure()
    assert git("config", "core.hooksPath", cwd=ws.git_dir).strip() == "/dev/null"
    assert git("config", "protocol.allow", cwd=ws.git_dir).strip() == "never"
    assert git("config", "protocol.https.allow", cwd=ws.git_dir).strip() == "always"
