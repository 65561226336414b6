"""Check runs judge the change: the merge base is checked too, only new findings fail a run."""

from __future__ import annotations

from pathlib import Path

from flagbot.bot.handlers import judging
from tests.bot.handlers_support import deliver, open_pr, runs_by_name

REAL = Path(__file__).resolve().parents[2] / "testing" / "resources" / "real" / "flaggems"
ROOT = "src/flag_gems/runtime/backend"
KUNLUNXIN = f"{ROOT}/_kunlunxin/__init__.py"
BACKENDS, PATCHES = "flagbot / backends", "flagbot / patches"


def real_flaggems() -> dict[str, str | bytes]:
    """The FlagGems ed2508bc extract (with _kunlunxin's real unused-unknown error)."""
    return {p.relative_to(REAL).as_posix(): p.read_bytes() for p in REAL.rglob("*")
            if p.is_file() and p.name != "README.md"}


def test_a_vendor_pr_on_inherited_errors_passes_and_lists_them(emu, settings) -> None:
    files = real_flaggems()
    repo = emu.create_repo("flagos/FlagGems", files={"README.md": "x\n", **files})
    init = files[KUNLUNXIN].decode()  # type: ignore[union-attr]
    pr = open_pr(emu, repo, {KUNLUNXIN: "# a comment line moves every finding down\n" + init})
    deliver(emu, settings, repo, pr["number"])
    run = runs_by_name(emu, repo, pr["head"]["sha"])[BACKENDS]
    assert run["conclusion"] == "success", run["output"]
    summary = run["output"]["summary"]
    assert "**0 new, 1 existing**" in summary and "'unique'" in summary and "<details>" in summary
    assert run["output"]["annotations"] == []
    comment = emu.comments(repo, pr["number"])[0]["body"]
    assert "(0 new, 1 existing)" in comment


def test_one_misspelt_unused_op_fails_the_run_naming_it(emu, settings) -> None:
    files = real_flaggems()
    repo = emu.create_repo("flagos/FlagGems", files={"README.md": "x\n", **files})
    init = files[KUNLUNXIN].decode()  # type: ignore[union-attr]
    pr = open_pr(emu, repo, {KUNLUNXIN: init.replace('"unique",', '"unique",\n    "cumsun",')})
    deliver(emu, settings, repo, pr["number"])
    run = runs_by_name(emu, repo, pr["head"]["sha"])[BACKENDS]
    assert run["conclusion"] == "failure"
    [ann] = run["output"]["annotations"]
    assert ann["path"] == KUNLUNXIN and "'cumsun'" in ann["message"]
    assert "**1 new, 1 existing**" in run["output"]["summary"]


def test_a_second_pr_on_the_same_base_reuses_the_base_findings(emu, settings) -> None:
    files = real_flaggems()
    repo = emu.create_repo("flagos/FlagGems", files={"README.md": "x\n", **files})
    init = files[KUNLUNXIN].decode()  # type: ignore[union-attr]
    first = open_pr(emu, repo, {KUNLUNXIN: "# one\n" + init}, branch="one")
    deliver(emu, settings, repo, first["number"])
    cache = settings.state_dir / judging.CACHE_FOLDER
    entries = sorted(cache.rglob("*.json"))
    assert entries
    for entry in entries:  # a changed entry shows the second delivery read it, not recomputed it
        entry.write_text(entry.read_text().replace("'unique'", "'unique' (cached)"))
    second = open_pr(emu, repo, {KUNLUNXIN: "# two\n" + init}, branch="two")
    deliver(emu, settings, repo, second["number"], delivery="d-2")
    run = runs_by_name(emu, repo, second["head"]["sha"])[BACKENDS]
    assert sorted(cache.rglob("*.json")) == entries
    assert run["conclusion"] == "failure"  # the cached base finding no longer matches: proof of reuse


def test_an_inherited_hetero_problem_does_not_fail_the_patches_run(emu, settings) -> None:
    repo = emu.create_repo("flagos/FlagScale", files={"README.md": "x\n",
                                                       "hardwares/hetero.txt": "0000000a: A_X100\n"})
    pr = open_pr(emu, repo, {"hardwares/hetero.txt": "# devices per base\n0000000a: A_X100\n"})
    deliver(emu, settings, repo, pr["number"])
    run = runs_by_name(emu, repo, pr["head"]["sha"])[PATCHES]
    assert run["conclusion"] == "success" and "**0 new, 1 existing**" in run["output"]["summary"]


def test_a_problem_the_pr_adds_is_new(emu, settings) -> None:
    repo = emu.create_repo("flagos/FlagScale", files={"README.md": "x\n"})
    pr = open_pr(emu, repo, {"hardwares/hetero.txt": "0000000a: A_X100\n"})
    deliver(emu, settings, repo, pr["number"])
    run = runs_by_name(emu, repo, pr["head"]["sha"])[PATCHES]
    assert run["conclusion"] == "failure" and "**1 new, 0 existing**" in run["output"]["summary"]


def test_every_judged_check_run_is_listed_for_merge_time_labels() -> None:
    from flagbot.bot.handlers import backends, patches, plugins, routing

    assert set(judging.JUDGED_CHECKS) == {patches.NAME, backends.NAME, routing.NAME, plugins.NAME}
