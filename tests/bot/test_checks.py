"""The two check runs: always created, failures as annotations on the right lines, batched, not duplicated."""

from __future__ import annotations

import pytest

from flagbot.bot.github import checkruns
from flagbot.hooks.findings import ERROR, Finding
from tests.bot.handlers_support import (
    clean_backend,
    deliver,
    make_patch,
    missing_patch_lines,
    open_pr,
    runs_by_name,
)

PATCHES, BACKENDS = "flagbot / patches", "flagbot / backends"
SYNTAX_ERROR = b"import triton\n\n\ndef f(args)\n    return 1\n"


def test_both_checks_succeed_with_nothing_to_check(emu, settings, repo) -> None:
    pr = open_pr(emu, repo, {"src/core.py": "x = 2\n"})
    deliver(emu, settings, repo, pr["number"])
    runs = runs_by_name(emu, repo, pr["head"]["sha"])
    assert (runs[PATCHES]["conclusion"], runs[PATCHES]["output"]["title"]) == ("success", "no patches touched")
    assert (runs[BACKENDS]["conclusion"], runs[BACKENDS]["output"]["title"]) == ("success", "no vendor folders touched")
    assert runs[PATCHES]["status"] == "completed"


def test_hetero_problems_fail_patches_check_with_annotations_on_their_lines(emu, settings, repo) -> None:
    pr = open_pr(emu, repo, {"hardwares/hetero.txt": "# bases\n0000000a: A_X100\n"})
    deliver(emu, settings, repo, pr["number"])
    run = runs_by_name(emu, repo, pr["head"]["sha"])[PATCHES]
    assert run["conclusion"] == "failure"
    [ann] = run["output"]["annotations"]
    assert (ann["path"], ann["start_line"], ann["annotation_level"]) == ("hardwares/hetero.txt", 2, "failure")
    assert "A_X100" in ann["message"]


def test_more_than_50_annotations_go_in_batches_of_50(emu, settings, repo) -> None:
    pr = open_pr(emu, repo, {"hardwares/hetero.txt": missing_patch_lines(80)})
    deliver(emu, settings, repo, pr["number"])
    run = runs_by_name(emu, repo, pr["head"]["sha"])[PATCHES]
    assert sorted(a["start_line"] for a in run["output"]["annotations"]) == list(range(1, 81))
    sent = [len(c.json["output"]["annotations"]) for c in emu.writes()
            if "check-runs" in c.path and c.json.get("output", {}).get("annotations")]
    assert sent == [50, 30]


def test_an_annotation_flood_is_capped_and_counted_in_the_summary(emu, settings, repo) -> None:
    pr = open_pr(emu, repo, {"hardwares/hetero.txt": missing_patch_lines(5000)})
    deliver(emu, settings, repo, pr["number"])
    run = runs_by_name(emu, repo, pr["head"]["sha"])[PATCHES]
    assert len(run["output"]["annotations"]) == settings.max_annotations == 100
    assert "4900 more finding(s) are not annotated" in run["output"]["summary"]
    writes = [c for c in emu.writes() if "check-runs" in c.path]
    assert len(writes) <= 2 * 2  # two check runs, at most two writes each


def test_backend_findings_annotate_the_vendor_file_line(emu, settings) -> None:
    repo = emu.create_repo("flagos/FlagGems", files={"README.md": "x\n", **clean_backend()})
    pr = open_pr(emu, repo, {"backends/_beta/heuristics_config_utils.py": SYNTAX_ERROR})
    deliver(emu, settings, repo, pr["number"])
    run = runs_by_name(emu, repo, pr["head"]["sha"])[BACKENDS]
    assert run["conclusion"] == "failure"
    assert [(a["path"], a["start_line"]) for a in run["output"]["annotations"]] == [
        ("backends/_beta/heuristics_config_utils.py", 4)]
    assert "flagbot check-backend backends/_beta" in run["output"]["summary"]


def test_a_flaggems_repository_without_configuration_is_checked_where_its_vendors_are(
        emu, settings) -> None:
    root = "src/flag_gems/runtime/backend"
    repo = emu.create_repo("flagos/FlagGems", files={"README.md": "x\n",
                                                      **clean_backend(root=root)})
    pr = open_pr(emu, repo, {f"{root}/_beta/heuristics_config_utils.py": SYNTAX_ERROR})
    deliver(emu, settings, repo, pr["number"])
    run = runs_by_name(emu, repo, pr["head"]["sha"])[BACKENDS]
    assert run["conclusion"] == "failure", run["output"]  # not "no vendor folders touched"
    assert [(a["path"], a["start_line"]) for a in run["output"]["annotations"]] == [
        (f"{root}/_beta/heuristics_config_utils.py", 4)]


def test_clean_vendor_folder_passes(emu, settings) -> None:
    repo = emu.create_repo("flagos/FlagGems", files={"README.md": "x\n"})
    pr = open_pr(emu, repo, clean_backend())
    deliver(emu, settings, repo, pr["number"])
    run = runs_by_name(emu, repo, pr["head"]["sha"])[BACKENDS]
    assert (run["conclusion"], run["output"]["title"]) == ("success", "1 vendor folder(s) pass")


def test_redelivery_finds_existing_check_runs_instead_of_duplicating(emu, settings, repo) -> None:
    pr = open_pr(emu, repo, {"hardwares/hetero.txt": missing_patch_lines(3)})
    deliver(emu, settings, repo, pr["number"])
    deliver(emu, settings, repo, pr["number"], delivery="d-2")
    assert sorted(r["name"] for r in emu.check_runs(repo, pr["head"]["sha"])) == [BACKENDS, PATCHES]


def test_new_head_gets_its_own_check_runs(emu, settings, repo) -> None:
    pr = open_pr(emu, repo, {"src/core.py": "x = 2\n"})
    deliver(emu, settings, repo, pr["number"])
    sha2 = emu.push_commit(repo, branch="feature", files={"hardwares/hetero.txt": missing_patch_lines(1)})
    emu.update_pull_head(repo, pr["number"])
    deliver(emu, settings, repo, pr["number"], action="synchronize", delivery="d-2")
    assert runs_by_name(emu, repo, sha2)[PATCHES]["conclusion"] == "failure"
    assert runs_by_name(emu, repo, pr["head"]["sha"])[PATCHES]["conclusion"] == "success"


@pytest.mark.parametrize("line,expected", [(0, 1), (7, 7)])
def test_whole_file_findings_go_on_line_one(line: int, expected: int) -> None:
    ann = checkruns.annotation(Finding("a.txt", line, ERROR, "r", "m"))
    assert (ann["start_line"], ann["end_line"]) == (expected, expected)


def test_digest_changes_with_content_only() -> None:
    a = checkruns.CheckResult("n", "success", "t", "s")
    assert checkruns.digest(a) == checkruns.digest(checkruns.CheckResult("n", "success", "t", "s"))
    assert checkruns.digest(a) != checkruns.digest(checkruns.CheckResult("n", "failure", "t", "s"))


def test_stored_patches_are_verified_and_a_broken_one_is_annotated(emu, settings, repo, tmp_path) -> None:
    good_rel, good = make_patch(repo, tmp_path / "a", "A_X100", {"src/core.py": "x = 100\n"})
    bad_rel, bad = make_patch(repo, tmp_path / "b", "B_Y100", {"src/core.py": "x = 200\n"})
    broken = bad.replace(b"-x = 1\n", b"-x = 7\n")
    base8 = good_rel.split("/")[2]
    pr = open_pr(emu, repo, {good_rel: good, bad_rel: broken,
                             "hardwares/hetero.txt": f"{base8}: A_X100 B_Y100\n"})
    deliver(emu, settings, repo, pr["number"])
    run = runs_by_name(emu, repo, pr["head"]["sha"])[PATCHES]
    assert run["conclusion"] == "failure"
    [ann] = run["output"]["annotations"]
    assert ann["path"] == bad_rel and ann["title"] == "patch-apply"
    lines = broken.decode().splitlines()
    line = lines.index("-x = 7") + 1
    # the finding points at the failing hunk: its header or the mismatched line itself
    assert ann["start_line"] in (line - 1, line) and lines[line - 2].startswith("@@"), (ann, line)
    assert f"`{good_rel}`: ok" in run["output"]["summary"]
    assert f"`{bad_rel}`: fails" in run["output"]["summary"]


def test_changed_result_on_same_head_gets_a_fresh_run_when_the_old_one_has_annotations(emu, settings, repo) -> None:
    pr = open_pr(emu, repo, {"hardwares/hetero.txt": missing_patch_lines(2)})
    deliver(emu, settings, repo, pr["number"])
    emu.push_commit(repo, branch="main", files={".github/flagbot.yml": "hardwares: hw\n"})
    deliver(emu, settings, repo, pr["number"], delivery="d-2")
    runs = [r for r in emu.check_runs(repo, pr["head"]["sha"]) if r["name"] == PATCHES]
    assert [r["conclusion"] for r in runs] == ["failure", "success"]
    assert runs[-1]["output"]["annotations"] == []


def test_changed_result_reuses_a_run_without_annotations(emu, settings, repo) -> None:
    pr = open_pr(emu, repo, {"hw/hetero.txt": missing_patch_lines(2)})
    deliver(emu, settings, repo, pr["number"])
    emu.push_commit(repo, branch="main", files={".github/flagbot.yml": "hardwares: hw\n"})
    deliver(emu, settings, repo, pr["number"], delivery="d-2")
    [run] = [r for r in emu.check_runs(repo, pr["head"]["sha"]) if r["name"] == PATCHES]
    assert run["conclusion"] == "failure" and len(run["output"]["annotations"]) == 2
