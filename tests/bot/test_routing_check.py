"""`flagbot / routing`: PRs that change routing files (or what they include) get the check run."""

from __future__ import annotations

from pathlib import Path

from tests.bot.handlers_support import deliver, open_pr, runs_by_name

PLUGIN = Path(__file__).resolve().parents[2] / "testing" / "resources" / "routing_plugin"
ROUTING = "flagbot / routing"
CUDA = "torch_fl/configs/backends_cuda.conf"


def plugin_files() -> dict[str, str | bytes]:
    """PyTorch-Plugin-FL 1adbc97, the extract (routing files, kernels, the torch pin)."""
    return {p.relative_to(PLUGIN).as_posix(): p.read_bytes() for p in PLUGIN.rglob("*")
            if p.is_file() and p.name != "README.md"}


def test_a_plugin_pr_editing_a_routing_file_gets_the_routing_run(emu, settings) -> None:
    files = plugin_files()
    repo = emu.create_repo("flagos-ai/PyTorch-Plugin-FL", files={"README.md": "x\n", **files})
    text = files[CUDA].decode()  # type: ignore[union-attr]
    pr = open_pr(emu, repo, {CUDA: text + "mm.out = cuda\n"})
    deliver(emu, settings, repo, pr["number"])
    run = runs_by_name(emu, repo, pr["head"]["sha"])[ROUTING]
    assert run["conclusion"] == "success", run["output"]
    assert run["output"]["title"] == "1 routing file(s) pass"


def test_a_misspelt_backend_fails_with_an_annotation_and_the_command(emu, settings) -> None:
    files = plugin_files()
    repo = emu.create_repo("flagos-ai/PyTorch-Plugin-FL", files={"README.md": "x\n", **files})
    text = files[CUDA].decode()  # type: ignore[union-attr]
    pr = open_pr(emu, repo, {CUDA: text + "abs = cdua\n"})
    deliver(emu, settings, repo, pr["number"])
    run = runs_by_name(emu, repo, pr["head"]["sha"])[ROUTING]
    assert run["conclusion"] == "failure"
    [ann] = [a for a in run["output"]["annotations"] if a["annotation_level"] == "failure"]
    assert ann["path"] == CUDA and "'cdua'" in ann["message"]
    assert f"flagbot check-routing {CUDA}" in run["output"]["summary"]
    assert "**1 new, 0 existing**" in run["output"]["summary"]


def test_a_change_to_an_included_file_checks_the_file_including_it(emu, settings) -> None:
    repo = emu.create_repo("flagos/plugin", files={
        "README.md": "x\n", "cfg/backends.conf": "include common.conf\nadd.Tensor = flaggems\n",
        "cfg/common.conf": "cumsum = flaggems\n"})
    pr = open_pr(emu, repo, {"cfg/common.conf": "cumsum = flaggems\nrelu = quantum\n"})
    deliver(emu, settings, repo, pr["number"])
    run = runs_by_name(emu, repo, pr["head"]["sha"])[ROUTING]
    assert run["conclusion"] == "failure" and "cfg/backends.conf" in run["output"]["summary"]
    assert [a["path"] for a in run["output"]["annotations"]] == ["cfg/common.conf"]


def test_prs_without_routing_changes_get_no_routing_run(emu, settings, repo) -> None:
    pr = open_pr(emu, repo, {"src/core.py": "x = 3\n"})
    deliver(emu, settings, repo, pr["number"])
    assert ROUTING not in runs_by_name(emu, repo, pr["head"]["sha"])


def test_routing_files_come_from_the_config(emu, settings) -> None:
    repo = emu.create_repo("flagos/plugin", files={
        "README.md": "x\n", ".github/flagbot.yml": "routing:\n  files: ['routes/*.cfg']\n"})
    pr = open_pr(emu, repo, {"routes/main.cfg": "relu = quantum\n", "other/backends.conf": "x = y\n"})
    deliver(emu, settings, repo, pr["number"])
    run = runs_by_name(emu, repo, pr["head"]["sha"])[ROUTING]
    assert run["output"]["title"] == "1 error(s) in 1 routing file(s)"
    assert [a["path"] for a in run["output"]["annotations"]] == ["routes/main.cfg"]
