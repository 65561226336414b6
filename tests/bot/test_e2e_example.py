"""End to end with the worked example: the stored `hardwares/` of this repository, proposed in a
pull request against the example upstream (both vendors configured on its default branch),
passes the bot's patch check and labels both vendors."""

from __future__ import annotations

import subprocess
from pathlib import Path

from testing import example_upstream
from testing.bot_e2e import app_settings, post_delivery, serving, wait_until

EXAMPLE = Path(__file__).resolve().parents[2] / "hardwares"
PATCHES = "flagbot / patches"


def test_the_worked_example_passes_the_patch_check_and_labels_its_vendors(emu, tmp_path) -> None:
    upstream = example_upstream.build(tmp_path / "miniscale")
    repo = emu.create_repo("flagos/miniscale")
    # the example's own commits, so the stored patches' base commit exists on the server
    subprocess.run(["git", "push", "-q", str(repo.bare_path), "main", "a_x100", "b_y100"],
                   cwd=upstream.path, check=True, capture_output=True)
    # the vendors are configured on the default branch: only known devices become labels
    emu.push_commit(repo, branch="main", files={
        ".github/flagbot.yml": "devices:\n  A_X100: {}\n  B_Y100: {}\n"})
    stored = {f"hardwares/{p.relative_to(EXAMPLE).as_posix()}": p.read_bytes()
              for p in sorted(EXAMPLE.rglob("*")) if p.is_file()}
    emu.push_commit(repo, branch="add-example-patches", files=stored)
    pr = emu.open_pull(repo, head="add-example-patches")
    with serving(app_settings(emu, tmp_path / "state")) as url:
        post_delivery(url, "pull_request",
                      emu.payload(event="pull_request", action="opened", repo=repo, number=1))
        runs = wait_until(lambda: {r["name"]: r for r in emu.check_runs(repo, pr["head"]["sha"])
                                   if r.get("conclusion")}.get(PATCHES), what="the patch check")
        wait_until(lambda: {"vendor: A_X100", "vendor: B_Y100"} <= set(emu.issue_labels(repo, 1)),
                   what="vendor labels")
    assert runs["conclusion"] == "success", runs["output"]
    summary = runs["output"]["summary"]
    for device in ("A_X100", "B_Y100"):
        assert f"hardwares/{device}/{upstream.base[:8]}/{upstream.base[:8]}.patch`: ok" in summary
