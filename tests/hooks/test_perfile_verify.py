"""`flagbot verify` / `check-patches` on FlagScale's per-file layout (real extract + planted defects)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from flagbot.hooks import check_patches, cli
from flagbot.hooks.findings import ERROR, WARNING, Finding
from flagbot.hooks.patches import perfile
from flagbot.hooks.patches.perfile_verify import Options, verify_folders
from tests.hooks import perfile_repo as pr
from tests.hooks.conftest import MakeRepo, Repo


@pytest.fixture(scope="module")
def flagscale(make_repo: MakeRepo) -> pr.PerfileRepo:
    return pr.build(make_repo)


@pytest.fixture
def planted(flagscale: pr.PerfileRepo, tmp_path: Path) -> Callable[[str, Callable[[bytes], bytes]], Repo]:
    """A copy of the repository with one file's bytes changed (left uncommitted)."""

    def plant(rel: str, edit: Callable[[bytes], bytes]) -> Repo:
        copy = flagscale.repo.copy(tmp_path / f"copy{len(list(tmp_path.iterdir()))}")
        path = copy.path / rel
        path.write_bytes(edit(path.read_bytes()))
        return copy

    return plant


def findings_of(repo: Path, *args: str) -> list[Finding]:
    return check_patches.check_patches(repo, list(args), hardwares=pr.HW, allow_missing_base=False)


def errors(found: list[Finding]) -> list[Finding]:
    return [f for f in found if f.severity == ERROR]


def test_real_folders_give_no_error_and_name_what_was_not_checked(
        flagscale: pr.PerfileRepo) -> None:
    before = flagscale.repo.snapshot()
    found = findings_of(flagscale.path)
    assert errors(found) == []
    warned = {(f.path, f.rule) for f in found if f.severity == WARNING}
    assert (f"{pr.KUNLUNXIN}/diff.yaml", "perfile-encrypted") in warned
    assert (f"{pr.MEGATRON}/diff.yaml", "perfile-unverified") in warned
    assert flagscale.repo.snapshot() == before  # nothing touched the checkout


def test_cli_verify_exits_0_on_the_real_layout(flagscale: pr.PerfileRepo,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["-C", str(flagscale.path), "verify"]) == 0
    out = capsys.readouterr().out
    assert "0 error(s)" in out and "perfile-encrypted" in out


def change_context(data: bytes) -> bytes:
    lines = data.split(b"\n")
    at = next(i for i, line in enumerate(lines) if line.startswith(b"@@"))
    ctx = next(i for i in range(at + 1, len(lines)) if lines[i].startswith(b" "))
    lines[ctx] = b" # changed by the test" + lines[ctx][1:]
    return b"\n".join(lines)


def cut_hunk(data: bytes) -> bytes:
    lines = data.rstrip(b"\n").split(b"\n")
    return b"\n".join(lines[:-3]) + b"\n"


def as_new_file(data: bytes) -> bytes:
    return (b"diff --git a/flagscale/train/arguments.py b/flagscale/train/arguments.py\n"
            b"new file mode 100644\nindex 000000000..3b18e512d\n--- /dev/null\n"
            b"+++ b/flagscale/train/arguments.py\n@@ -0,0 +1 @@\n+hello world\n")


def drop_commit(data: bytes) -> bytes:
    return b"\n".join(line for line in data.split(b"\n") if not line.startswith(b"commit:"))


def short_commit(data: bytes) -> bytes:
    return b"\n".join(line[:16] if line.startswith(b"commit:") else line
                      for line in data.split(b"\n"))


@pytest.mark.parametrize(("rel", "edit", "rule"), [
    (pr.ARGS_PATCH, change_context, "perfile-apply"),
    (pr.ARGS_PATCH, as_new_file, "perfile-apply"),
    (f"{pr.HUAWEI}/tools/checkpoint/qwen2_5_vl/run.sh.patch", cut_hunk, "perfile-apply"),
    (f"{pr.METAX}/diff.patch", change_context, "perfile-apply"),
    (f"{pr.CAMBRICON}/diff.yaml", drop_commit, "perfile-meta"),
    (f"{pr.CAMBRICON}/diff.yaml", short_commit, "perfile-meta"),
], ids=["changed-context", "new-file-exists", "cut-hunk", "whole-backend", "no-commit",
        "malformed-commit"])
def test_each_planted_defect_is_one_error_naming_its_file(
        planted: Callable[[str, Callable[[bytes], bytes]], Repo], rel: str,
        edit: Callable[[bytes], bytes], rule: str, capsys: pytest.CaptureFixture[str]) -> None:
    repo = planted(rel, edit)
    found = errors(findings_of(repo.path))
    assert [(f.path, f.rule) for f in found] == [(rel, rule)], found
    assert cli.main(["-C", str(repo.path), "verify"]) == 1
    assert rel in capsys.readouterr().out


def test_apply_error_carries_gits_reason_and_the_line(
        planted: Callable[[str, Callable[[bytes], bytes]], Repo]) -> None:
    repo = planted(pr.ARGS_PATCH, as_new_file)
    (found,) = errors(findings_of(repo.path))
    assert "already exists" in found.message and found.line == 1
    repo = planted(pr.ARGS_PATCH, change_context)
    (found,) = errors(findings_of(repo.path))
    assert "patch does not apply" in found.message
    assert (repo.path / pr.ARGS_PATCH).read_bytes().split(b"\n")[found.line - 1].startswith(b"@@")


def test_layout_only_does_not_apply(planted: Callable[[str, Callable[[bytes], bytes]], Repo]) -> None:
    repo = planted(pr.ARGS_PATCH, change_context)
    assert errors(check_patches.check_patches(repo.path, [], hardwares=pr.HW, layout_only=True)) == []
    assert errors(check_patches.check_patches(repo.path, [pr.ARGS_PATCH], hardwares=pr.HW,
                                              layout_only=False))


def test_only_the_folders_of_the_given_files_are_checked(
        planted: Callable[[str, Callable[[bytes], bytes]], Repo]) -> None:
    repo = planted(pr.ARGS_PATCH, change_context)
    assert errors(findings_of(repo.path, f"{pr.HUAWEI}/run.sh.patch")) == []
    assert [f.path for f in errors(findings_of(repo.path, f"{pr.CAMBRICON}/diff.yaml"))] == \
        [pr.ARGS_PATCH]


def test_a_patch_in_a_folder_without_diff_yaml_is_one_error(flagscale: pr.PerfileRepo,
                                                            tmp_path: Path) -> None:
    repo = flagscale.repo.copy(tmp_path / "orphan")
    repo.write(f"{pr.HW}/Cambricon_MLU/vllm/setup.py.patch", "diff --git a/setup.py b/setup.py\n")
    found = errors(findings_of(repo.path))
    assert [(f.path, f.rule) for f in found] == [(f"{pr.HW}/Cambricon_MLU/vllm/setup.py.patch",
                                                  "perfile-meta")]


def test_history_naming_a_missing_folder_or_a_bad_id_is_an_error(
        planted: Callable[[str, Callable[[bytes], bytes]], Repo]) -> None:
    history = f"{pr.HW}/patch_history.yaml"
    repo = planted(history, lambda d: d + b"Ghost_X1:\n  train:\n    vllm:\n    - 1234abcd\n")
    (found,) = errors(findings_of(repo.path, history))
    assert "Ghost_X1" in found.message and "no folder" in found.message
    repo = planted(history, lambda d: d.replace(b"    - ", b"    - 1234abcd", 1))
    (found,) = errors(findings_of(repo.path, history))
    assert found.path == history and "1234abcd" in found.message


def test_submodule_patches_are_applied_in_a_given_source(
        flagscale: pr.PerfileRepo, make_repo: MakeRepo, tmp_path: Path) -> None:
    src = make_repo("vllm-src")
    src.write("vllm/config.py", "".join(f"value_{i} = {i}\n" for i in range(20)))
    base = src.commit("vllm upstream")
    src.write("vllm/config.py", "".join(f"value_{i} = {i * 2}\n" for i in range(20)))
    src.write("vllm/platforms/npu.py", "NPU = True\n")
    diff = src.git("diff", base, "--binary") + "\n"
    src.git("reset", "-q", "--hard", base)
    repo = flagscale.repo.copy(tmp_path / "sub")
    folder = f"{pr.HW}/Ascend_X1/vllm"
    for section in diff.split("diff --git ")[1:]:
        name = section.split("\n", 1)[0].split(" b/", 1)[1]
        repo.write(f"{folder}/{name}.patch", "diff --git " + section)
    repo.write(f"{folder}/diff.yaml", f"backends_commit:\n  vllm: {base}\n"
                                      f"commit: {flagscale.base_a}\ndevice_type: Ascend_X1\n"
                                      "task:\n- inference\n")
    found = findings_of(repo.path, f"{folder}/diff.yaml")
    assert [(f.rule, f.severity) for f in found] == [("perfile-unverified", WARNING)]
    opts = Options(backend_sources={"vllm": src.path})
    folders = perfile.folders_for(repo.path, pr.HW, [f"{folder}/diff.yaml"])
    assert verify_folders(repo.path, folders, opts) == []
    shutil.copytree(src.path, repo.path / "third_party" / "vllm")  # an initialised submodule
    assert verify_folders(repo.path, folders) == []
    patch = repo.path / folder / "vllm/config.py.patch"
    patch.write_bytes(change_context(patch.read_bytes()))
    found = verify_folders(repo.path, folders, opts)
    assert [(f.path, f.rule) for f in found] == [(f"{folder}/vllm/config.py.patch", "perfile-apply")]
    assert "vllm commit" in found[0].message


def test_an_alias_bomb_diff_yaml_is_one_error_not_a_hang(
        planted: Callable[[str, Callable[[bytes], bytes]], Repo]) -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8))
    repo = planted(f"{pr.CAMBRICON}/diff.yaml", lambda _: bomb.encode())
    (found,) = errors(findings_of(repo.path))
    assert (found.path, found.rule) == (f"{pr.CAMBRICON}/diff.yaml", "perfile-meta")


def test_every_broken_patch_of_a_folder_is_named(flagscale: pr.PerfileRepo, tmp_path: Path) -> None:
    repo = flagscale.repo.copy(tmp_path / "two")
    broken = [f"{pr.HUAWEI}/run.sh.patch", f"{pr.HUAWEI}/tools/checkpoint/qwen2_5_vl/run.sh.patch"]
    for rel in broken:
        (repo.path / rel).write_bytes(cut_hunk((repo.path / rel).read_bytes()))
    assert sorted(f.path for f in errors(findings_of(repo.path))) == broken


def test_two_patches_creating_one_path_clash(flagscale: pr.PerfileRepo, tmp_path: Path) -> None:
    repo = flagscale.repo.copy(tmp_path / "clash")
    shutil.copy(repo.path / pr.HUAWEI / "hostfile.patch", repo.path / pr.HUAWEI / "hostfile2.patch")
    (found,) = errors(findings_of(repo.path))
    assert (found.path, found.rule) == (f"{pr.HUAWEI}/hostfile2.patch", "perfile-apply")
    assert f"{pr.HUAWEI}/hostfile.patch changes too" in found.message


def test_hetero_check_says_a_per_file_repository_has_no_hetero_txt(
        flagscale: pr.PerfileRepo, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["-C", str(flagscale.path), "hetero", "check"]) == 0
    out = capsys.readouterr().out
    assert f"{pr.HW}/hetero.txt:0: note: [hetero-perfile] absent" in out


def test_large_folders_are_applied_in_batches(flagscale: pr.PerfileRepo, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from flagbot.hooks.patches import perfile_verify

    monkeypatch.setattr(perfile_verify, "BATCH", 3)  # the Huawei folder's 8 files: 3 batches
    assert errors(findings_of(flagscale.path, f"{pr.HUAWEI}/diff.yaml")) == []
    repo = flagscale.repo.copy(tmp_path / "batches")
    last = f"{pr.HUAWEI}/tools/datasets/qwenvl/run.sh.patch"
    (repo.path / last).write_bytes(cut_hunk((repo.path / last).read_bytes()))
    assert [f.path for f in errors(findings_of(repo.path, f"{pr.HUAWEI}/diff.yaml"))] == [last]


def test_drift_names_each_per_file_folder_once(flagscale: pr.PerfileRepo) -> None:
    from flagbot.hooks.patches.drift import check_drift

    report = check_drift(flagscale.path, flagscale.repo.rev("HEAD"), pr.HW)
    assert report.checked == [] and report.drifted == []
    assert [line.split(":", 1)[0] for line in report.skipped] == sorted(
        f"{f}/" for f in (pr.CAMBRICON, pr.HUAWEI, pr.KUNLUNXIN, pr.METAX, pr.MEGATRON))
    assert f"{pr.HUAWEI}/: FlagScale per-file folder (8 patch file(s))" in report.skipped[1]


def test_verify_takes_a_folder(planted: Callable[[str, Callable[[bytes], bytes]], Repo],
                               capsys: pytest.CaptureFixture[str]) -> None:
    repo = planted(pr.ARGS_PATCH, change_context)
    assert cli.main(["-C", str(repo.path), "verify", pr.HUAWEI]) == 0
    assert cli.main(["-C", str(repo.path), "verify", pr.CAMBRICON]) == 1
    assert f"{pr.ARGS_PATCH}:5: error: [perfile-apply]" in capsys.readouterr().out
