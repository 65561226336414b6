"""PR labels: PrivateUse1 by globs, vendor labels, created once, bot-added removed, people's kept."""

from __future__ import annotations

from flagbot.bot.github import ChangedFile, Label
from flagbot.bot.handlers import globs, labels
from flagbot.hooks.config import RepoConfig, parse_config
from tests.bot.handlers_support import deliver, open_pr

PU1 = "module: PrivateUse1"


def test_glob_double_star_spans_folders_and_single_star_does_not() -> None:
    rx = globs.compile_globs(("torch/csrc/acc/**", "c10/core/DeviceType.*", "**/backends*.conf"))
    assert globs.matching_glob("torch/csrc/acc/a/b.cpp", rx) == "torch/csrc/acc/**"
    assert globs.matching_glob("c10/core/DeviceType.h", rx) == "c10/core/DeviceType.*"
    assert globs.matching_glob("c10/core/DeviceType/x.h", rx) is None
    assert globs.matching_glob("backends.conf", rx) == "**/backends*.conf"
    assert globs.matching_glob("cfg/x/backends_gpu.conf", rx) == "**/backends*.conf"


def test_plan_labels_names_devices_from_hardwares_and_backend_folders() -> None:
    wanted = labels.plan_labels(RepoConfig(), [
        "hardwares/A_X100/aaaa1111/aaaa1111.patch", "hardwares/hetero.txt",
        "backends/_nvidia/ops.py", "backends/_template/ops.py", "torch_fl/__init__.py", "docs/x.md"])
    assert sorted(wanted) == [PU1, "vendor: A_X100", "vendor: nvidia"]
    assert wanted["vendor: nvidia"].files == ("backends/_nvidia/ops.py",)
    assert "torch_fl/**" in wanted[PU1].reason


def test_plan_labels_follows_configured_roots_and_pattern() -> None:
    cfg = parse_config("backends: src/flag_gems/runtime/backend\nlabels:\n  vendor:\n    pattern: 'hw/{device}'\n")
    wanted = labels.plan_labels(cfg, ["src/flag_gems/runtime/backend/_mthreads/x.py", "backends/_nvidia/y.py"])
    assert list(wanted) == ["hw/mthreads"]


def test_renamed_file_touches_the_folder_it_left() -> None:
    paths = labels.touched_paths([ChangedFile("docs/ops.py", "renamed", "backends/_amd/ops.py")])
    assert "vendor: amd" in labels.plan_labels(RepoConfig(), paths)


def test_plan_change_removes_only_labels_the_bot_added() -> None:
    wanted = labels.plan_labels(RepoConfig(), ["backends/_amd/x.py"])
    change = labels.plan_change(wanted, ["vendor: nvidia", "vendor: intel", "bug"], ["vendor: nvidia"],
                                {"vendor: amd": Label("vendor: amd", "fff")})
    assert change.to_add == ("vendor: amd",)
    assert change.to_remove == ("vendor: nvidia",)
    assert change.to_create == ()
    assert change.bot_labels == ("vendor: amd",)


def test_opened_pr_gets_labels_created_once_with_colour_and_description(emu, settings, repo) -> None:
    pr = open_pr(emu, repo, {"hardwares/A_X100/README.md": "x\n", "torch/csrc/acc/Module.cpp": "// y\n"})
    deliver(emu, settings, repo, pr["number"])
    assert sorted(emu.issue_labels(repo, pr["number"])) == [PU1, "vendor: A_X100"]
    made = emu.labels(repo)
    assert made["vendor: A_X100"]["color"] == "0e8a16"
    assert "A_X100" in made["vendor: A_X100"]["description"]
    pr2 = open_pr(emu, repo, {"hardwares/A_X100/other.md": "z\n"}, branch="second")
    emu.reset_calls()
    deliver(emu, settings, repo, pr2["number"], delivery="d-2")
    assert [c for c in emu.writes() if c.path.endswith("/labels") and "/issues/" not in c.path] == []
    assert emu.issue_labels(repo, pr2["number"]) == ["vendor: A_X100"]


def test_bot_label_removed_when_paths_leave_but_human_label_kept(emu, settings, repo) -> None:
    pr = open_pr(emu, repo, {"hardwares/A_X100/README.md": "x\n", "backends/_amd/ops.py": "y = 1\n"})
    deliver(emu, settings, repo, pr["number"])
    emu.label_issue(repo, pr["number"], "vendor: B_Y100", "needs review")
    emu.push_commit(repo, branch="feature", delete=["backends/_amd/ops.py"])
    emu.update_pull_head(repo, pr["number"])
    deliver(emu, settings, repo, pr["number"], action="synchronize", delivery="d-2")
    assert sorted(emu.issue_labels(repo, pr["number"])) == ["needs review", "vendor: A_X100", "vendor: B_Y100"]


def test_label_a_person_added_first_is_not_removed_later(emu, settings, repo) -> None:
    emu.add_label(repo, "vendor: A_X100", color="123456")
    pr = open_pr(emu, repo, {"hardwares/A_X100/README.md": "x\n"})
    emu.label_issue(repo, pr["number"], "vendor: A_X100")
    deliver(emu, settings, repo, pr["number"])
    emu.push_commit(repo, branch="feature", files={"hardwares/A_X100/README.md": "src/core.py\n"},
                    delete=["hardwares/A_X100/README.md"])
    emu.update_pull_head(repo, pr["number"])
    deliver(emu, settings, repo, pr["number"], action="synchronize", delivery="d-2")
    assert emu.issue_labels(repo, pr["number"]) == ["vendor: A_X100"]
    assert emu.labels(repo)["vendor: A_X100"]["color"] == "123456"


def test_past_githubs_file_list_cap_files_come_from_git(emu, settings, repo, monkeypatch) -> None:
    from flagbot.bot.handlers import pull_request

    monkeypatch.setattr(pull_request, "FILES_CAP", 3)
    pr = open_pr(emu, repo, {f"src/m{i}.py": "x\n" for i in range(4)} | {"hardwares/C_Z100/a.md": "a\n"})
    result = deliver(emu, settings, repo, pr["number"])
    assert (result["files"], result["files_from_git"]) == (5, True)
    assert emu.issue_labels(repo, pr["number"]) == ["vendor: C_Z100"]


def test_a_device_gets_one_label_whatever_folder_spells_it() -> None:
    wanted = labels.plan_labels(RepoConfig(), [
        "hardwares/A_X100/aaaa1111/aaaa1111.patch", "backends/_a_x100/ops.py"], known={"a_x100"})
    assert list(wanted) == ["vendor: A_X100"]
    assert wanted["vendor: A_X100"].files == ("hardwares/A_X100/aaaa1111/aaaa1111.patch",
                                              "backends/_a_x100/ops.py")


def test_a_backend_folder_of_a_configured_device_carries_its_spelling() -> None:
    cfg = parse_config("devices:\n  A_X100:\n    runner: [self-hosted, a-x100]\n")
    assert list(labels.plan_labels(cfg, ["backends/_a_x100/ops.py"], known={"A_X100"})) == [
        "vendor: A_X100"]
