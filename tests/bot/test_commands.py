"""Slash commands through the real handlers against the GitHub emulator: reaction and reply,
permissions, code-block rules, idempotent replays, `/unpatch` pushing real branches."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from flagbot.bot.handlers import issue_comment
from tests.bot.commands_support import branch, comment, example_pr, replies, tree_of
from tests.bot.handlers_support import bot_for


def test_help_reacts_and_replies_with_every_command(emu, settings, repo) -> None:
    emu.push_commit(repo, branch="f", files={"a.txt": "a\n"})
    emu.open_pull(repo, head="f")
    result = comment(emu, settings, repo, "thanks!\n/help")
    assert emu.reactions(repo, result["comment"]) == ["eyes"]
    [reply] = replies(emu, repo)
    assert "@bob:" in reply and "✅ `/help`" in reply
    for usage, needs in (("/unpatch DEV [DEV ...] BASE", "read"), ("/patch [DEV ...]", "write"),
                         ("/help", "read")):
        assert re.search(rf"\| `{re.escape(usage)}` \| .* \| {needs} \| `/", reply), reply


def test_unknown_command_names_the_known_ones(emu, settings, repo) -> None:
    emu.push_commit(repo, branch="f", files={"a.txt": "a\n"})
    emu.open_pull(repo, head="f")
    comment(emu, settings, repo, "/rebase")
    [reply] = replies(emu, repo)
    assert "❌ `/rebase`" in reply
    assert "known: `/check`, `/help`, `/ok-to-test`, `/patch`, `/retest`, `/unpatch`" in reply


def test_permission_refusal_names_the_needed_and_the_held_role(emu, settings, repo) -> None:
    emu.push_commit(repo, branch="f", files={"a.txt": "a\n"})
    emu.open_pull(repo, head="f")
    emu.set_permission(repo, "tri", "triage")
    comment(emu, settings, repo, "/patch A_X100", sender="tri")
    assert "needs the `write` permission on this repository; `tri` has `triage`" in replies(emu, repo)[0]


def test_config_raises_a_commands_minimum(emu, settings, repo) -> None:
    emu.push_commit(repo, branch="main", files={".github/flagbot.yml": "commands:\n  unpatch: write\n"})
    emu.push_commit(repo, branch="f", files={"a.txt": "a\n"})
    emu.open_pull(repo, head="f")
    comment(emu, settings, repo, "/unpatch A_X100 1234\n/help")
    reply = replies(emu, repo)[0]
    assert "`/unpatch` needs the `write` permission" in reply
    assert "| `/unpatch DEV [DEV ...] BASE` | " in reply and "| write | `/unpatch A_X100" in reply


def test_bots_and_unchanged_edits_are_not_wanted(emu, repo) -> None:
    emu.push_commit(repo, branch="f", files={"a.txt": "a\n"})
    emu.open_pull(repo, head="f")
    by_bot = emu.payload(event="issue_comment", action="created", repo=repo, number=1,
                         sender=emu.bot_login, body="/help")
    by_bot["comment"]["user"]["login"] = emu.bot_login
    assert not issue_comment.wants(by_bot)
    other = emu.payload(event="issue_comment", action="created", repo=repo, number=1, body="/help",
                        comment_id=by_bot["comment"]["id"])
    other["comment"]["user"].update(login="ci-helper[bot]", type="Bot")
    assert not issue_comment.wants(other)
    edit = emu.payload(event="issue_comment", action="edited", repo=repo, number=1, body="/help  ",
                       changes={"body": {"from": "/help"}})
    assert not issue_comment.wants(edit)
    edit["changes"]["body"]["from"] = "/unpatch A_X100 1234"
    assert issue_comment.wants(edit)
    plain = emu.payload(event="issue_comment", action="created", repo=repo, number=1,
                        body="```\n/help\n```")
    assert not issue_comment.wants(plain)


def test_redelivery_answers_once_and_an_edit_updates_the_reply(emu, settings, repo) -> None:
    emu.push_commit(repo, branch="f", files={"a.txt": "a\n"})
    emu.open_pull(repo, head="f")
    payload = emu.payload(event="issue_comment", action="created", repo=repo, number=1,
                          sender="bob", body="/frob")
    bot = bot_for(settings)
    bot.run("x-1", "issue_comment", payload)
    emu.reset_calls()
    again = bot.run("x-1", "issue_comment", payload)
    assert again["reply"] == "unchanged" and emu.writes() == []
    edited = json.loads(json.dumps(payload))
    edited.update(action="edited", changes={"body": {"from": "/frob"}})
    edited["comment"]["body"] = "/help"
    result = bot.run("x-2", "issue_comment", edited)
    assert result["reply"] == "edited"
    [reply] = replies(emu, repo)
    assert "✅ `/help`" in reply and "/frob" not in reply


def test_commands_beyond_the_bound_get_one_line(emu, settings, repo) -> None:
    emu.push_commit(repo, branch="f", files={"a.txt": "a\n"})
    emu.open_pull(repo, head="f")
    result = comment(emu, settings, repo, "\n".join(["/frob"] * 13))
    assert len(result["commands"]) == 10 and result["dropped"] == 3
    assert "3 more command(s) not run: at most 10 per comment." in replies(emu, repo)[0]


def test_a_broken_config_is_the_answer(emu, settings, repo) -> None:
    emu.push_commit(repo, branch="main", files={".github/flagbot.yml": "commands: 3\n"})
    emu.push_commit(repo, branch="f", files={"a.txt": "a\n"})
    emu.open_pull(repo, head="f")
    comment(emu, settings, repo, "/help")
    assert "has errors, so no command runs" in replies(emu, repo)[0]


def test_unpatch_pushes_the_vendor_tree_and_says_how_to_fetch_it(emu, settings, tmp_path) -> None:
    repo, upstream = example_pr(emu, tmp_path)
    result = comment(emu, settings, repo, f"/unpatch A_X100 {upstream.base[:4]}")
    b8 = upstream.base[:8]
    name = f"unpatch/A_X100/{b8}"
    tip = branch(repo, name)
    assert result["commands"][0]["branches"] == [name] and tip
    assert tree_of(repo.bare_path, tip) == tree_of(upstream.path, upstream.heads["A_X100"])
    reply = replies(emu, repo)[0]
    assert f"`{name}` (pushed)" in reply and "3 files changed, 5 insertions(+), 2 deletions(-)" in reply
    assert f"git fetch {repo.clone_url} {name}:{name}" in reply
    assert re.search(r"flagscale/ops/attention.py +\| 2 \+-", reply)
    # asked again (a new comment) for the same head: answered from the remembered build
    again = comment(emu, settings, repo, f"/unpatch A_X100 {upstream.base}")
    assert again["commands"][0]["reused"] == 1
    assert again["commands"][0]["pushed"] == {name: "unchanged"}
    assert "(already up to date)" in replies(emu, repo)[1]


def test_unpatch_of_a_heterogeneous_base_pushes_one_branch_per_device(emu, settings, tmp_path) -> None:
    repo, upstream = example_pr(emu, tmp_path)
    comment(emu, settings, repo, f"/unpatch A_X100 B_Y100 {upstream.base[:8]}")
    for device in ("A_X100", "B_Y100"):
        tip = branch(repo, f"unpatch/{device}/{upstream.base[:8]}")
        assert tip and tree_of(repo.bare_path, tip) == tree_of(upstream.path, upstream.heads[device])


def test_unpatch_errors_say_exactly_why(emu, settings, tmp_path) -> None:
    repo, upstream = example_pr(emu, tmp_path)
    cases = {
        "/unpatch C_Z100 abcd": "known devices: A_X100, B_Y100",
        "/unpatch A_X100 abcd": f"stored: {upstream.base[:8]}",
        "/unpatch A_X100": "expected 1 to 8 devices and a base commit",
        "/unpatch ../../etc abcd": "device type '../../etc' is not valid",
        "/unpatch A_X100 --upload-pack=sh": "must be a commit id prefix of at least 4 hex digits",
        "/unpatch A_X100 A_X100 abcd": "is given twice",
    }
    for body, message in cases.items():
        comment(emu, settings, repo, body)
        reply = replies(emu, repo)[-1]
        assert message in reply and "❌" in reply, (body, reply)
        assert "usage: `/unpatch DEV [DEV ...] BASE`" in reply
    heads = repo.bare_path / "refs" / "heads"
    assert sorted(str(r.relative_to(heads)) for r in heads.rglob("*") if r.is_file()) == \
        ["add-patches", "main"]


HOSTILE = ["/unpatch", "/patch", "/help", "/x", "../../etc/passwd", "$(touch /tmp/pwned)", "`id`",
           "A_X100", "Ａ_X100", "A_Х100", "B_Y100", "ad96", "ad96826c", "--upload-pack=touch x",
           "-c", "HEAD~1", "@{-1}", "\u202e", "💥", ">", "```", "<!--", "\n", " " * 4, "x" * 3000,
           "/unpatch A_X100 ad96", "/unpatch hardwares/../x ad96", "/unpatch A_X100 ad96/../../"]


def test_hostile_comments_get_bounded_answers_and_write_nothing_outside(emu, settings, tmp_path) -> None:
    repo, _ = example_pr(emu, tmp_path)
    before = {p for p in tmp_path.rglob("*") if not p.is_relative_to(tmp_path / "state")
              and not p.is_relative_to(tmp_path / "gh")}
    rng = random.Random(7)
    for _ in range(120):
        body = "".join(rng.choice(HOSTILE) + rng.choice([" ", "\n"]) for _ in range(rng.randint(1, 40)))
        if not issue_comment.wants({"action": "created", "comment": {"body": body, "user": {"login": "eve"}}}):
            continue
        result = comment(emu, settings, repo, body, sender="eve")
        assert result.get("reply") in ("created", "edited"), result
        assert len(replies(emu, repo)[-1]) <= 65536
    after = {p for p in tmp_path.rglob("*") if not p.is_relative_to(tmp_path / "state")
             and not p.is_relative_to(tmp_path / "gh")}
    assert after == before
    assert not Path("/tmp/pwned").exists()
    heads = sorted(str(p.relative_to(repo.bare_path / "refs" / "heads"))
                   for p in (repo.bare_path / "refs" / "heads").rglob("*") if p.is_file())
    assert set(heads) <= {"main", "add-patches", "unpatch/A_X100/ad96826c", "unpatch/B_Y100/ad96826c"}
    assert emu.server_errors == []
