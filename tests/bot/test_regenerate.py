"""Patch regeneration on device-labelled pull requests, against the emulator's bare repositories:
same-repository and fork PRs, settling after the bot's own push, replays, hetero.txt, failures."""

from __future__ import annotations

from flagbot.bot.handlers import pull_request
from flagbot.hooks.patches.verify import verify_patch
from tests.bot.commands_support import branch, comment, replies, show
from tests.bot.handlers_support import bot_for, deliver, runs_by_name

CODE = {"src/core.py": "x = 2  # tuned for A_X100\n", "src/extra.py": "y = 1\n"}
PATCHES = "flagbot / patches"


def labelled_pr(emu, repo, *labels: str, body: str = "", **kwargs) -> dict:
    emu.push_commit(repo, branch="feature", files=CODE, message="[A_X100] adapt core")
    pr = emu.open_pull(repo, head="feature", body=body, **kwargs)
    emu.label_issue(repo, pr["number"], *labels)
    return pr


def test_a_labelled_pr_gets_its_patch_pushed_and_the_next_push_settles(emu, settings, repo, tmp_path) -> None:
    pr = labelled_pr(emu, repo, "device: A_X100")
    opened = emu.payload(event="pull_request", action="opened", repo=repo, number=1)
    result = bot_for(settings).run("d-1", "pull_request", opened)
    base8 = pr["base"]["sha"][:8]
    rel = f"hardwares/A_X100/{base8}/{base8}.patch"
    head = branch(repo, "feature")
    assert result["regenerated"] == "pushed" and head == result["commit"]
    log = emu_log(repo, head)
    assert log == (f"flagbot[bot] <flagbot[bot]@users.noreply.github.com>\n[A_X100] regenerate "
                   f"patch for {base8}\n{pr['head']['sha']}")
    assert changed(repo, head) == [rel]
    # the bot's push comes back as synchronize: the stored patch is right, nothing is pushed
    emu.update_pull_head(repo, 1)
    emu.reset_calls()
    again = deliver(emu, settings, repo, 1, "synchronize", delivery="d-2")
    assert again["regenerated"] == "unchanged" and branch(repo, "feature") == head
    assert runs_by_name(emu, repo, head)[PATCHES]["conclusion"] == "success"
    assert "stored patch for base" in replies(emu, repo)[0]
    # a redelivery of the first event (an older head) pushes nothing again
    stale = bot_for(settings).run("d-1", "pull_request", opened)
    assert stale["superseded_by"] == head and branch(repo, "feature") == head
    checkout = tmp_path / "check"
    emu_clone(repo, checkout)
    assert verify_patch(checkout, rel) == []


def test_a_fork_allowing_edits_gets_the_commit_on_its_branch(emu, settings, repo) -> None:
    fork = emu.fork_repo(repo, "carol/FlagScale")
    emu.push_commit(fork, branch="feature", files=CODE, message="[A_X100] adapt core")
    emu.open_pull(repo, head="feature", head_repo=fork, user="carol", maintainer_can_modify=True)
    emu.label_issue(repo, 1, "device: A_X100")
    result = deliver(emu, settings, repo, 1)
    assert result["regenerated"] == "pushed" and branch(fork, "feature") == result["commit"]
    assert branch(repo, "flagbot/patch/1") is None


def test_a_fork_without_edits_gets_a_branch_here_and_the_summary_says_how_to_take_it(emu, settings, repo) -> None:
    fork = emu.fork_repo(repo, "carol/FlagScale")
    head = emu.push_commit(fork, branch="feature", files=CODE, message="[A_X100] adapt core")
    emu.open_pull(repo, head="feature", head_repo=fork, user="carol")
    emu.label_issue(repo, 1, "device: A_X100")
    result = deliver(emu, settings, repo, 1)
    assert result["regenerated"] == "branch" and branch(fork, "feature") == head
    ours = branch(repo, "flagbot/patch/1")
    assert ours and emu_log(repo, ours).endswith(head)
    summary = replies(emu, repo)[0]
    assert "this fork does not allow edits by maintainers" in summary
    assert f"git fetch {repo.clone_url} flagbot/patch/1\ngit merge --ff-only FETCH_HEAD" in summary
    # a redelivery makes the same commit: the branch stays where it is
    deliver(emu, settings, repo, 1, delivery="d-again")
    assert branch(repo, "flagbot/patch/1") == ours


def test_two_device_labels_store_the_patch_for_both_and_list_them_in_hetero(emu, settings, repo) -> None:
    pr = labelled_pr(emu, repo, "device: B_Y100", "device: A_X100")
    result = deliver(emu, settings, repo, 1)
    head, b8 = result["commit"], pr["base"]["sha"][:8]
    a, b = (show(repo, head, f"hardwares/{d}/{b8}/{b8}.patch") for d in ("A_X100", "B_Y100"))
    assert a and a == b
    assert show(repo, head, "hardwares/hetero.txt") == f"{b8}: A_X100 B_Y100\n".encode()
    assert emu_log(repo, head).splitlines()[1] == f"[A_X100 B_Y100] regenerate patch for {b8}"
    emu.update_pull_head(repo, 1)
    assert deliver(emu, settings, repo, 1, "synchronize", delivery="d-2")["regenerated"] == "unchanged"


def test_failures_end_in_the_check_run_and_the_summary(emu, settings, repo) -> None:
    labelled_pr(emu, repo, "device: A_X100", body="Adapt.\n\nBase-Commit: 0123456789abcdef\n")
    result = deliver(emu, settings, repo, 1)
    head = branch(repo, "feature")
    assert result["regenerated"] == "failed"
    run = runs_by_name(emu, repo, head)[PATCHES]
    assert run["conclusion"] == "failure" and run["output"]["title"] == "patch regeneration failed"
    assert "names 0123456789abcdef, which is not a commit" in run["output"]["summary"]
    assert "**failed**" in replies(emu, repo)[0]


def test_a_base_that_is_not_an_ancestor_is_the_engines_message(emu, settings, repo) -> None:
    other = emu.push_commit(repo, branch="other", files={"o.txt": "o\n"})
    labelled_pr(emu, repo, "device: A_X100", body=f"Base-Commit: {other}")
    deliver(emu, settings, repo, 1)
    run = runs_by_name(emu, repo, branch(repo, "feature"))[PATCHES]
    assert f"base {other[:12]} is not an ancestor of current" in run["output"]["summary"]


def test_only_hardwares_changes_or_no_label_regenerate_nothing(emu, settings, repo) -> None:
    emu.push_commit(repo, branch="feature", files={"hardwares/A_X100/notes.md": "n\n"})
    emu.open_pull(repo, head="feature")
    emu.label_issue(repo, 1, "device: A_X100")
    assert deliver(emu, settings, repo, 1)["regenerated"] == "skipped"
    emu.push_commit(repo, branch="plain", files=CODE)
    emu.open_pull(repo, head="plain")
    assert deliver(emu, settings, repo, 2, delivery="d-2")["regenerated"] == "skipped"


def test_a_device_label_added_by_a_person_regenerates(emu, settings, repo) -> None:
    labelled_pr(emu, repo, "device: A_X100")
    bot_labelled = emu.payload(event="pull_request", action="labeled", repo=repo, number=1,
                               sender=emu.bot_login, label={"name": "vendor: A_X100"})
    bot_labelled["sender"]["type"] = "Bot"
    assert not pull_request.wants(bot_labelled)
    other = emu.payload(event="pull_request", action="labeled", repo=repo, number=1,
                        sender="alice", label={"name": "bug"})
    assert bot_for(settings).run("l-1", "pull_request", other)["skipped"] == "not a device or ci label"
    labelled = emu.payload(event="pull_request", action="labeled", repo=repo, number=1,
                           sender="alice", label={"name": "device: A_X100"})
    assert bot_for(settings).run("l-2", "pull_request", labelled)["regenerated"] == "pushed"


def test_slash_patch_regenerates_for_writers_only(emu, settings, repo) -> None:
    emu.push_commit(repo, branch="feature", files=CODE, message="[A_X100] adapt core")
    emu.open_pull(repo, head="feature")
    head = branch(repo, "feature")
    comment(emu, settings, repo, "/patch A_X100", sender="bob")
    assert "needs the `write` permission" in replies(emu, repo)[0] and branch(repo, "feature") == head
    emu.set_permission(repo, "wendy", "write")
    result = comment(emu, settings, repo, "/patch A_X100", sender="wendy")
    assert result["commands"][0]["regenerated"] == "pushed"
    assert branch(repo, "feature") == result["commands"][0]["commit"]
    assert "regenerated for base" in replies(emu, repo)[1]
    comment(emu, settings, repo, "/patch", sender="wendy")
    assert "no device given and this pull request has no device label" in replies(emu, repo)[2]


def emu_log(repo, rev: str) -> str:
    from testing.github_emulator import gitstore
    return gitstore.git(repo.bare_path, "log", "-1", "--format=%an <%ae>%n%B%P", rev).decode().strip()


def changed(repo, rev: str) -> list[str]:
    from testing.github_emulator import gitstore
    out = gitstore.git(repo.bare_path, "diff-tree", "--no-commit-id", "-r", "--name-only", rev)
    return out.decode().split()


def emu_clone(repo, path) -> None:
    import subprocess
    subprocess.run(["git", "clone", "-q", "--branch", "feature", repo.clone_url, str(path)],
                   check=True, capture_output=True)
