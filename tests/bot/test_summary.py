"""The sticky summary comment: one per PR, found by its marker, edited in place, never duplicated."""

from __future__ import annotations

from flagbot.bot.github import Comment
from flagbot.bot.handlers import summary
from tests.bot.handlers_support import deliver, missing_patch_lines, open_pr


def bot_comments(emu, repo, number):
    return [c for c in emu.comments(repo, number) if c["user"]["login"] == emu.bot_login]


def test_summary_lists_labels_with_reasons_and_check_results(emu, settings, repo) -> None:
    pr = open_pr(emu, repo, {"hardwares/A_X100/README.md": "x\n", "hardwares/hetero.txt": missing_patch_lines(1)})
    deliver(emu, settings, repo, pr["number"])
    [comment] = bot_comments(emu, repo, pr["number"])
    body = comment["body"]
    assert body.startswith(summary.MARKER)
    assert "**`vendor: A_X100`**: touches `hardwares/A_X100/`" in body
    assert "| flagbot / patches | ❌" in body and "| flagbot / backends | ✅" in body
    assert "flagbot hetero check" in body  # next steps name the command to run


def test_summary_is_edited_in_place_on_new_pushes(emu, settings, repo) -> None:
    pr = open_pr(emu, repo, {"hardwares/A_X100/notes.md": "x\n"})
    deliver(emu, settings, repo, pr["number"])
    sha2 = emu.push_commit(repo, branch="feature", files={"src/core.py": "x = 3\n"},
                           delete=["hardwares/A_X100/notes.md"])
    emu.update_pull_head(repo, pr["number"])
    deliver(emu, settings, repo, pr["number"], action="synchronize", delivery="d-2")
    [comment] = bot_comments(emu, repo, pr["number"])
    assert sha2[:10] in comment["body"]
    assert "removed `vendor: A_X100`" in comment["body"]


def test_marker_in_someone_elses_comment_is_ignored(emu, settings, repo) -> None:
    pr = open_pr(emu, repo, {"src/core.py": "x = 2\n"})
    forged = summary.marker({"bot_labels": ["bug"]}) + "\nfake"
    emu.add_comment(repo, pr["number"], "mallory", forged)
    emu.label_issue(repo, pr["number"], "bug")
    deliver(emu, settings, repo, pr["number"])
    assert emu.issue_labels(repo, pr["number"]) == ["bug"]
    assert len(bot_comments(emu, repo, pr["number"])) == 1
    assert emu.comments(repo, pr["number"])[0]["body"] == forged


def test_metadata_round_trips_and_cannot_close_the_html_comment() -> None:
    body = summary.marker({"bot_labels": ["a-->b"]}) + "\ntext"
    assert "-->b" not in body.split("\n")[0][:-3]
    assert summary.bot_labels(Comment(1, body, "x")) == ["a-->b"]


def test_unreadable_metadata_means_no_bot_labels() -> None:
    assert summary.bot_labels(Comment(1, "<!-- flagbot:summary {broken -->", "x")) == []
    assert summary.bot_labels(None) == []


def test_the_vendor_guide_states_the_label_condition_the_check_run_gives() -> None:
    from pathlib import Path

    from flagbot.bot.handlers import labels

    why = labels.unusable("NEW_Z1", "hardwares/NEW_Z1", "vendor: NEW_Z1", known=set())
    assert why is not None
    guide = (Path(__file__).parents[2] / "docs/vendors.md").read_text(encoding="utf-8")
    assert why in " ".join(guide.split())
