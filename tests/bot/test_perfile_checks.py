"""`flagbot / patches` on a FlagScale repository in the per-file layout (no configuration)."""

from __future__ import annotations

from pathlib import Path

from testing.github_emulator import Emulator
from testing.github_emulator.state import EmuRepo
from tests.bot.handlers_support import deliver, open_pr, runs_by_name
from tests.hooks import perfile_repo as pr
from tests.hooks.test_perfile_verify import change_context

PATCHES = "flagbot / patches"


def files_under(root: Path, prefix: str = "") -> dict[str, str | bytes]:
    return {prefix + p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def flagscale(emu: Emulator) -> tuple[EmuRepo, str]:
    """FlagScale's main as far as the extract's Cambricon and Huawei folders need it."""
    repo = emu.create_repo("flagos/FlagScale", files=files_under(pr.EXTRACT / "base-a9e79992"))
    return repo, emu.push_commit(repo, branch="main", files={"README.md": "FlagScale\n"})


def vendor_files(base: str) -> dict[str, str | bytes]:
    """The two real per-file folders of the extract, pointed at `base`."""
    files: dict[str, str | bytes] = {}
    for folder in (pr.CAMBRICON, pr.HUAWEI):
        for rel, data in files_under(pr.EXTRACT / folder, folder + "/").items():
            if rel.endswith("/diff.yaml"):
                data = bytes(data).replace(pr.BASE_A.encode(), base.encode())  # type: ignore[arg-type]
            files[rel] = data
    return files


def test_a_pr_adding_per_file_patches_gets_them_verified(emu: Emulator, settings) -> None:
    repo, base = flagscale(emu)
    pull = open_pr(emu, repo, vendor_files(base))
    deliver(emu, settings, repo, pull["number"])
    run = runs_by_name(emu, repo, pull["head"]["sha"])[PATCHES]
    assert (run["conclusion"], run["output"]["title"]) == ("success", "9 patch(es) verified")
    assert pr.ARGS_PATCH in run["output"]["summary"]


def test_a_defect_in_a_per_file_patch_fails_the_check_on_that_file(emu: Emulator, settings) -> None:
    repo, base = flagscale(emu)
    files = vendor_files(base)
    files[pr.ARGS_PATCH] = change_context(bytes(files[pr.ARGS_PATCH]))  # type: ignore[arg-type]
    pull = open_pr(emu, repo, files)
    deliver(emu, settings, repo, pull["number"])
    run = runs_by_name(emu, repo, pull["head"]["sha"])[PATCHES]
    assert run["conclusion"] == "failure"
    failures = [a for a in run["output"]["annotations"] if a["annotation_level"] == "failure"]
    assert [(a["path"], a["title"]) for a in failures] == [(pr.ARGS_PATCH, "perfile-apply")]



def test_a_device_label_writes_no_seed_patch_into_a_per_file_repository(
        emu: Emulator, settings) -> None:
    repo, base = flagscale(emu)
    emu.push_commit(repo, branch="main", files=vendor_files(base), message="vendor folders")
    pull = open_pr(emu, repo, {"flagscale/train/arguments.py": "# tuned\n"})
    emu.label_issue(repo, pull["number"], "device: Cambricon_MLU")
    result = deliver(emu, settings, repo, pull["number"])
    assert result["regenerated"] == "skipped"
    assert not [c for c in emu.writes() if "/git/" in c.path]
    assert emu.pull(repo, pull["number"])["head"]["sha"] == pull["head"]["sha"]


def test_configured_hardwares_lets_the_bot_write_seed_patches_there(emu: Emulator, settings) -> None:
    repo, base = flagscale(emu)
    emu.push_commit(repo, branch="main", files={**vendor_files(base),
                                                ".github/flagbot.yml": "hardwares: hardware\n"})
    pull = open_pr(emu, repo, {"flagscale/train/arguments.py": "# tuned\n"})
    emu.label_issue(repo, pull["number"], "device: Cambricon_MLU")
    result = deliver(emu, settings, repo, pull["number"])
    assert result["regenerated"] == "pushed"


def test_submodule_patches_are_counted_apart_never_as_verified(emu: Emulator, settings) -> None:
    repo, base = flagscale(emu)
    files = {rel: data for rel, data in files_under(pr.EXTRACT / pr.MEGATRON, pr.MEGATRON + "/").items()}
    files[f"{pr.MEGATRON}/diff.yaml"] = bytes(files[f"{pr.MEGATRON}/diff.yaml"]).replace(  # type: ignore[arg-type]
        pr.BASE_A.encode(), base.encode())
    pull = open_pr(emu, repo, files)
    deliver(emu, settings, repo, pull["number"])
    run = runs_by_name(emu, repo, pull["head"]["sha"])[PATCHES]
    assert (run["conclusion"], run["output"]["title"]) == (
        "success", "0 patch(es) verified, 3 not verifiable here")
    assert f"`{pr.MEGATRON}/megatron/core/timers.py.patch`: not verifiable here" in run["output"]["summary"]
