"""`/ok-to-test` approves the head the maintainer could have seen, never one pushed after the
comment, whatever order the bot handles the comment and the push in."""

from __future__ import annotations

import time
from typing import Any

from tests.bot.commands_support import replies
from tests.bot.devices_support import (
    BACKEND,
    deliver_pr,
    device_repo,
    dispatches,
    kernel_runs,
    open_device_pr,
)
from tests.bot.handlers_support import bot_for


def written_comment(emu, repo, body: str, sender: str = "maint") -> dict[str, Any]:
    """The delivery of a comment written now (handled later, as a busy queue would)."""
    return emu.payload(event="issue_comment", action="created", repo=repo, number=1,
                       sender=sender, body=body)


def handle_comment(settings, payload: dict[str, Any]) -> dict[str, Any]:
    return bot_for(settings).run(f"c-{payload['comment']['id']}", "issue_comment", payload)


def push_b(emu, repo) -> str:
    time.sleep(1.1)  # GitHub's timestamps have whole seconds: B arrives strictly after
    emu.push_commit(repo, branch="feature", files={BACKEND: "def softmax(x, dim):\n    return x - 0\n"})
    return str(emu.update_pull_head(repo, 1)["head"]["sha"])


def test_a_push_after_the_comment_is_not_approved_when_the_comment_is_handled_first(emu, settings) -> None:
    repo = device_repo(emu)
    a = open_device_pr(emu, repo, user="mallory")["head"]["sha"]
    deliver_pr(emu, settings, repo)
    time.sleep(1.1)
    approval = written_comment(emu, repo, "/ok-to-test")
    b = push_b(emu, repo)
    handle_comment(settings, approval)  # the bot sees the comment with the PR already at B
    assert dispatches(emu) == []
    assert f"moved to `{b[:12]}`" in replies(emu, repo)[-1] and a[:12] in replies(emu, repo)[-1]
    deliver_pr(emu, settings, repo, action="synchronize", delivery="d-2", before=a)
    assert dispatches(emu) == []
    assert kernel_runs(emu, repo, b)[-1]["conclusion"] == "action_required"


def test_a_push_after_the_comment_is_not_approved_when_the_push_is_handled_first(emu, settings) -> None:
    repo = device_repo(emu)
    a = open_device_pr(emu, repo, user="mallory")["head"]["sha"]
    deliver_pr(emu, settings, repo)
    time.sleep(1.1)
    approval = written_comment(emu, repo, "/ok-to-test")
    b = push_b(emu, repo)
    deliver_pr(emu, settings, repo, action="synchronize", delivery="d-2", before=a)
    handle_comment(settings, approval)
    assert dispatches(emu) == [] and kernel_runs(emu, repo, b)[-1]["conclusion"] == "action_required"
    # naming the new head after reviewing it approves it
    handle_comment(settings, written_comment(emu, repo, f"/ok-to-test {b[:10]}"))
    [body] = dispatches(emu)
    assert body["inputs"]["sha"] == b


def test_a_named_sha_must_be_the_head(emu, settings) -> None:
    repo = device_repo(emu)
    open_device_pr(emu, repo, user="mallory")
    deliver_pr(emu, settings, repo)
    handle_comment(settings, written_comment(emu, repo, "/ok-to-test 0123456789abcdef"))
    assert dispatches(emu) == [] and "is not this pull request's head" in replies(emu, repo)[-1]
    handle_comment(settings, written_comment(emu, repo, "/ok-to-test ../../etc"))
    assert dispatches(emu) == [] and "is not a commit sha" in replies(emu, repo)[-1]


def test_without_a_record_of_the_head_the_maintainer_is_asked_to_name_it(emu, settings) -> None:
    repo = device_repo(emu)
    pr = open_device_pr(emu, repo, user="mallory")  # the bot never saw the PR's head arrive
    handle_comment(settings, written_comment(emu, repo, "/ok-to-test"))
    assert dispatches(emu) == []
    assert f"/ok-to-test {pr['head']['sha'][:12]}" in replies(emu, repo)[-1]
