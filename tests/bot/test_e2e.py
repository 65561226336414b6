"""End to end: signed delivery over HTTP -> app -> ledger/queue -> worker -> handlers -> emulator."""

from __future__ import annotations

from testing.bot_e2e import (
    app_settings,
    base_files,
    big_pr_files,
    post_delivery,
    serving,
    wait_until,
)

PATCHES, BACKENDS = "flagbot / patches", "flagbot / backends"


def done(emu, repo, number, sha):
    runs = {r["name"] for r in emu.check_runs(repo, sha)}
    return runs == {PATCHES, BACKENDS} and any(c["user"]["login"] == emu.bot_login
                                               for c in emu.comments(repo, number))


def test_300_file_pr_gets_labels_checks_and_summary_through_the_server(emu, tmp_path) -> None:
    repo = emu.create_repo("flagos/FlagScale", files=base_files())
    emu.push_commit(repo, branch="feature", files=big_pr_files(repo, tmp_path / "work"))
    pr = emu.open_pull(repo, head="feature")
    assert pr["changed_files"] == 300
    settings = app_settings(emu, tmp_path / "state")
    with serving(settings) as url:
        post_delivery(url, "pull_request", emu.payload(event="pull_request", action="opened", repo=repo, number=1))
        wait_until(lambda: done(emu, repo, 1, pr["head"]["sha"]) and
                   len(emu.issue_labels(repo, 1)) == 3)
    assert sorted(emu.issue_labels(repo, 1)) == ["module: PrivateUse1", "vendor: A_X100", "vendor: beta"]
    runs = {r["name"]: r for r in emu.check_runs(repo, pr["head"]["sha"])}
    assert runs[PATCHES]["conclusion"] == "success", runs[PATCHES]["output"]
    assert runs[BACKENDS]["conclusion"] == "success", runs[BACKENDS]["output"]


def test_two_deliveries_for_one_pr_at_once_leave_one_comment_and_one_run_each(emu, tmp_path) -> None:
    repo = emu.create_repo("flagos/FlagScale", files=base_files())
    emu.push_commit(repo, branch="feature", files={"hardwares/B_Y100/x.md": "x\n"})
    pr = emu.open_pull(repo, head="feature")
    settings = app_settings(emu, tmp_path / "state")
    with serving(settings, threads=2) as url:
        for action in ("opened", "ready_for_review"):
            post_delivery(url, "pull_request", emu.payload(event="pull_request", action=action, repo=repo, number=1))
        wait_until(lambda: sum(1 for c in emu.calls if c.method == "GET" and c.path.endswith("/files")) == 2
                   and done(emu, repo, 1, pr["head"]["sha"]))
        wait_until(lambda: emu.issue_labels(repo, 1) == ["vendor: B_Y100"])
    assert len(emu.comments(repo, 1)) == 1
    assert sorted(r["name"] for r in emu.check_runs(repo, pr["head"]["sha"])) == [BACKENDS, PATCHES]
