"""Who gets a new vendor's label, a maintainer's own label, and labels applied at merge."""

from __future__ import annotations

import copy

from flagbot.bot.handlers.labels import NEW_VENDOR
from flagbot.bot.store.factory import open_label_log
from flagbot.hooks.config import DEFAULTS, validate_labels
from tests.bot.handlers_support import BASE_FILES, clean_backend, deliver, open_pr, runs_by_name


def new_vendor_files() -> dict[str, str | bytes]:
    """A well-formed new vendor folder, backends/_foo/ (the clean _beta, renamed)."""
    out: dict[str, str | bytes] = {}
    for rel, text in clean_backend().items():
        if rel.startswith("backends/_beta/"):
            body = text.replace('"beta"', '"foo"') if isinstance(text, str) else text
            out["backends/_foo/" + rel.removeprefix("backends/_beta/")] = body
    return out


def test_a_writers_new_vendor_folder_gets_its_label(emu, settings) -> None:
    repo = emu.create_repo("flagos/FlagGems", files=dict(BASE_FILES))
    emu.set_permission(repo, "alice", "write")
    pr = open_pr(emu, repo, new_vendor_files())
    deliver(emu, settings, repo, pr["number"])
    assert "vendor: foo" in emu.issue_labels(repo, pr["number"])


def test_a_readers_new_vendor_folder_is_explained_the_same_in_run_and_comment(emu, settings) -> None:
    repo = emu.create_repo("flagos/FlagGems", files=dict(BASE_FILES))
    pr = open_pr(emu, repo, new_vendor_files())
    deliver(emu, settings, repo, pr["number"])
    assert "vendor: foo" not in emu.issue_labels(repo, pr["number"])
    run = runs_by_name(emu, repo, pr["head"]["sha"])["flagbot / backends"]
    [note] = [a for a in run["output"]["annotations"] if a["title"] == "vendor-label"]
    assert NEW_VENDOR in note["message"]
    comment = emu.comments(repo, pr["number"])[0]["body"]
    assert f"no label for `backends/_foo/`: {NEW_VENDOR}" in comment
    assert "none: this pull request touches no" not in comment


def test_a_maintainers_own_vendor_label_is_kept(emu, settings) -> None:
    repo = emu.create_repo("flagos/FlagGems", files=dict(BASE_FILES))
    pr = open_pr(emu, repo, new_vendor_files())
    deliver(emu, settings, repo, pr["number"])
    emu.label_issue(repo, pr["number"], "vendor: foo")  # a maintainer decides
    emu.push_commit(repo, branch="feature", files={"backends/_foo/README.md": "foo\n"})
    emu.update_pull_head(repo, pr["number"])
    deliver(emu, settings, repo, pr["number"], action="synchronize", delivery="d-2")
    assert "vendor: foo" in emu.issue_labels(repo, pr["number"])


MERGED_CONFIG = ".github/flagbot.yml", "labels:\n  vendor:\n    when: merged\n"


def merged_setup(emu, settings, files):
    repo = emu.create_repo("flagos/FlagScale", files={**BASE_FILES, MERGED_CONFIG[0]: MERGED_CONFIG[1]})
    pr = open_pr(emu, repo, files)
    deliver(emu, settings, repo, pr["number"])
    return repo, pr


def test_a_when_merged_label_waits_for_the_merge(emu, settings) -> None:
    repo, pr = merged_setup(emu, settings, {"hardwares/A_X100/notes.md": "x\n"})
    assert "vendor: A_X100" not in emu.issue_labels(repo, pr["number"])
    assert "**`vendor: A_X100`** at merge, if flagbot's checks pass" in \
        emu.comments(repo, pr["number"])[0]["body"]
    emu.merge_pull(repo, pr["number"])
    done = deliver(emu, settings, repo, pr["number"], "closed", delivery="close")
    assert "vendor: A_X100" in emu.issue_labels(repo, pr["number"]), done
    assert [e.number for e in open_label_log(settings).find("vendor: A_X100")] == [pr["number"]]


def test_a_when_merged_label_is_not_applied_when_a_check_failed(emu, settings) -> None:
    repo, pr = merged_setup(emu, settings, {"hardwares/A_X100/notes.md": "x\n",
                                            "hardwares/hetero.txt": "0000000a: A_X100\n"})
    assert runs_by_name(emu, repo, pr["head"]["sha"])["flagbot / patches"]["conclusion"] == "failure"
    emu.merge_pull(repo, pr["number"])
    deliver(emu, settings, repo, pr["number"], "closed", delivery="close")
    assert "vendor: A_X100" not in emu.issue_labels(repo, pr["number"])
    assert open_label_log(settings).find("vendor: A_X100") == []


def test_an_unknown_when_is_a_config_error() -> None:
    labels = copy.deepcopy(DEFAULTS["labels"])
    labels["vendor"]["when"] = "later"
    assert any(p.startswith("labels.vendor.when: must be one of open, merged") for p in validate_labels(labels))
