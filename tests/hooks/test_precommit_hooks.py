"""Every hook through real pre-commit, against temporary git repositories (slow: builds a venv).

The hook repository is a committed snapshot of this project's working files, cloned with
`core.symlinks=false` (pre-commit clones by commit and try-repo ignores untracked files). One `try-repo` run proves the try-repo path; the other hooks
go through `pre-commit run` with a config naming that snapshot and one PRE_COMMIT_HOME for the
session, so the hook environment (pip install of flagbot) is built once.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from flagbot.hooks.patches import make
from testing.backend_corpus import BROKEN, CLEAN, build_case
from testing.layout import clone_without_links
from tests.hooks.test_real_layouts import ENCRYPTED, FLAGGEMS_ERRORS, OLD_PATCHES, REAL

pytestmark = pytest.mark.precommit
PROJECT = Path(__file__).resolve().parents[2]
EDITED_ADD = "def add(x, y, alpha=1):\n    return x\n\n\ndef add_(x, y, alpha=1):\n    return x\n"


def git(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k.endswith(("_NAME", "_EMAIL"))}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    proc = subprocess.run(["git", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", *args],
                          cwd=cwd, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"git {args}: {proc.stderr}"
    return proc.stdout.strip()


def commit_all(repo: Path, message: str = "snapshot") -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """This project's working files, committed and cloned with `core.symlinks=false` (how Git
    for Windows, and pre-commit's own clone there, check out): (path, sha)."""
    return clone_without_links(tmp_path_factory.mktemp("hook-repo"))


@pytest.fixture(scope="session")
def precommit_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Environment for pre-commit: one hook-environment store for the whole session."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_DIR", "GIT_INDEX", "GIT_WORK"))}
    env.update(PRE_COMMIT_HOME=str(tmp_path_factory.mktemp("pre-commit-home")),
               GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", PRE_COMMIT_COLOR="never")
    yield env


def pre_commit(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    exe = Path(os.sys.executable).with_name("pre-commit")
    return subprocess.run([str(exe), *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=900, check=False)


def run_hook(env: dict[str, str], hook_repo: tuple[Path, str], target: Path, hook: str,
             *args: str) -> subprocess.CompletedProcess[str]:
    """`pre-commit run HOOK` in `target` with a config (outside it) naming the snapshot."""
    path, sha = hook_repo
    config = target.parent / f"{target.name}-config.yaml"
    config.write_text(f"repos:\n- repo: {path}\n  rev: {sha}\n  hooks:\n  - id: {hook}\n")
    return pre_commit(env, target, "run", "-c", str(config), hook, *args)


def new_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    return path


def test_try_repo_check_vendor_backend_reports_a_broken_vendor(
        hook_repo: tuple[Path, str], precommit_env: dict[str, str], tmp_path: Path) -> None:
    target = new_repo(tmp_path / "target")
    shutil.copytree(CLEAN, target / "backends")
    shutil.copytree(BROKEN / "tune-schema" / "files", target / "backends/_acme", dirs_exist_ok=True)
    commit_all(target)
    proc = pre_commit(precommit_env, target, "try-repo", str(hook_repo[0]), "check-vendor-backend",
                      "--all-files")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "backends/_acme/tune_configs.yaml:8: error: [tune-schema]" in proc.stdout


def test_check_vendor_backend_checks_only_folders_with_staged_changes(
        hook_repo: tuple[Path, str], precommit_env: dict[str, str], tmp_path: Path) -> None:
    target = new_repo(tmp_path / "target")
    build_case("all-duplicate", target)  # lands in backends/_acme
    shutil.move(target / "backends/_acme", target / "backends/_bad")
    shutil.copytree(CLEAN / "_acme", target / "backends/_acme")
    commit_all(target)
    (target / "backends/_acme/ops/add.py").write_text(EDITED_ADD)
    git(target, "add", "backends/_acme/ops/add.py")
    ok = run_hook(precommit_env, hook_repo, target, "check-vendor-backend")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    (target / "backends/_bad/ops/add.py").write_text(EDITED_ADD)
    git(target, "add", "backends/_bad/ops/add.py")
    bad = run_hook(precommit_env, hook_repo, target, "check-vendor-backend")
    assert bad.returncode == 1
    assert "backends/_bad/ops/__init__.py" in bad.stdout and "[all-duplicate]" in bad.stdout
    assert "backends/_acme" not in bad.stdout


def test_check_routing_hook_fails_on_unknown_backend(
        hook_repo: tuple[Path, str], precommit_env: dict[str, str], tmp_path: Path) -> None:
    target = new_repo(tmp_path / "target")
    (target / "backends.conf").write_text("add.Tensor = flaggems\nmm = quantum\n")
    (target / "README.md").write_text("not routing\n")
    commit_all(target)
    proc = run_hook(precommit_env, hook_repo, target, "check-routing", "--all-files")
    assert proc.returncode == 1
    assert "backends.conf:2: error: [routing-unknown-backend]" in proc.stdout


def test_check_plugins_hook_checks_dispatch_configs_and_overrides(
        hook_repo: tuple[Path, str], precommit_env: dict[str, str], tmp_path: Path) -> None:
    plugins = PROJECT / "testing/resources/plugins"
    target = new_repo(tmp_path / "target")
    shutil.copytree(plugins / "vllm", target, dirs_exist_ok=True)
    shutil.copytree(plugins / "megatron", target, dirs_exist_ok=True)
    commit_all(target)
    clean = pre_commit(precommit_env, target, "try-repo", str(hook_repo[0]), "check-plugins",
                       "--all-files", "--verbose")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "warning: [plugin-config-unreachable]" in clean.stdout  # musa.yaml
    metax = target / "vllm_fl/dispatch/config/metax.yaml"
    metax.write_text(metax.read_text().replace("- vendor:metax", "- vendor:cuda"))
    registry = target / "megatron/plugin/override_registry.py"
    registry.write_text(registry.read_text().replace('vendor="npu"', 'vendor="ascend"', 1))
    git(target, "add", "-A")
    bad = run_hook(precommit_env, hook_repo, target, "check-plugins")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "vllm_fl/dispatch/config/metax.yaml:5: error: [plugin-no-implementation]" in bad.stdout
    assert "megatron/plugin/override_registry.py:26: error: [plugin-unknown-vendor]" in bad.stdout


def test_check_hetero_hook_fails_on_missing_patch(
        hook_repo: tuple[Path, str], precommit_env: dict[str, str], tmp_path: Path) -> None:
    target = new_repo(tmp_path / "target")
    (target / "hardwares").mkdir()
    (target / "hardwares/hetero.txt").write_text("aaaa1111: A_X100\n")
    commit_all(target)
    proc = run_hook(precommit_env, hook_repo, target, "check-hetero", "--all-files")
    assert proc.returncode == 1
    assert "[hetero-missing-patch]" in proc.stdout


def test_check_patches_layout_at_commit_full_at_manual_and_shallow_warns(
        hook_repo: tuple[Path, str], precommit_env: dict[str, str], tmp_path: Path) -> None:
    target = new_repo(tmp_path / "target")
    (target / "a.py").write_text("print(1)\n")
    base = commit_all(target, "base")
    (target / "a.py").write_text("print(2)\n")
    commit_all(target, "[Vendor] change")
    make.make_patch(target, ["A_X100"], base, "HEAD")
    commit_all(target, "store patch")
    commit_stage = run_hook(precommit_env, hook_repo, target, "check-patches", "--all-files",
                            "--verbose")
    assert commit_stage.returncode == 0 and "check-patches (layout)" in commit_stage.stdout, \
        commit_stage.stdout
    manual = run_hook(precommit_env, hook_repo, target, "check-patches", "--all-files",
                      "--hook-stage", "manual", "--verbose")
    assert manual.returncode == 0 and "check-patches (full)" in manual.stdout, manual.stdout
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{target}", str(shallow)], check=True)
    warned = run_hook(precommit_env, hook_repo, shallow, "check-patches", "--all-files",
                      "--hook-stage", "manual", "--verbose")
    assert warned.returncode == 0, warned.stdout
    assert "warning: [base-unavailable]" in warned.stdout
    (target / "hardwares/A_X100/bad.patch").write_text("junk\n")
    commit_all(target, "misplaced patch")
    layout = run_hook(precommit_env, hook_repo, target, "check-patches", "--all-files")
    assert layout.returncode == 1 and "[patch-layout]" in layout.stdout, layout.stdout


def real_target(tmp_path: Path, name: str, config: str | None = None) -> Path:
    """A repository holding the real-layout extract `name`, as its upstream has it."""
    target = new_repo(tmp_path / name)
    shutil.copytree(REAL / name, target, dirs_exist_ok=True)
    (target / "README.md").unlink()
    if config is not None:
        (target / ".github").mkdir()
        (target / ".github/flagbot.yml").write_text(config)
    commit_all(target)
    return target


def test_check_vendor_backend_fails_the_real_flaggems_tree(
        hook_repo: tuple[Path, str], precommit_env: dict[str, str], tmp_path: Path) -> None:
    target = real_target(tmp_path, "flaggems")
    proc = run_hook(precommit_env, hook_repo, target, "check-vendor-backend", "--all-files")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert all(line in proc.stdout for line in FLAGGEMS_ERRORS), proc.stdout


def test_check_vendor_backend_fails_when_its_files_map_to_no_vendor(
        hook_repo: tuple[Path, str], precommit_env: dict[str, str], tmp_path: Path) -> None:
    target = real_target(tmp_path, "flaggems", config="backends: backends\n")
    proc = run_hook(precommit_env, hook_repo, target, "check-vendor-backend", "--all-files")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "warning: [nothing-checked]" in proc.stdout
    assert "`backends: src/flag_gems/runtime/backend` in .github/flagbot.yml" in proc.stdout


def test_patch_hooks_examine_the_real_flagscale_tree(
        hook_repo: tuple[Path, str], precommit_env: dict[str, str], tmp_path: Path) -> None:
    target = real_target(tmp_path, "flagscale-g1")
    (target / "tools/patch").mkdir(parents=True)
    (target / "tools/patch/hetero.txt").write_text("237377e9: kunlunxin_R300p metax_C500\n")
    commit_all(target, "hetero.txt where the seed tools kept it")
    patches = run_hook(precommit_env, hook_repo, target, "check-patches", "--all-files")
    assert patches.returncode == 1, patches.stdout + patches.stderr
    assert all(f"{rel}:0: error: [patch-old-format]" in patches.stdout for rel in OLD_PATCHES)
    assert f"{ENCRYPTED}:0: warning: [patch-encrypted]" in patches.stdout
    hetero = run_hook(precommit_env, hook_repo, target, "check-hetero", "--all-files")
    assert hetero.returncode == 1, hetero.stdout + hetero.stderr
    assert "tools/patch/hetero.txt:1: error: [hetero-missing-patch] metax_C500" in hetero.stdout


def test_patch_hook_under_flagscales_own_exclude_fails_instead_of_passing(
        hook_repo: tuple[Path, str], precommit_env: dict[str, str], tmp_path: Path) -> None:
    # FlagScale's top-level `exclude:` (3fde442) hides hardware/*.patch from every hook; the
    # encrypted patch still reaches ours, which must not report Passed having checked nothing.
    target = real_target(tmp_path, "flagscale-g1")
    path, sha = hook_repo
    (target / ".pre-commit-config.yaml").write_text(
        "exclude: |\n    (?x)^(\n        hardware/.*\\.patch|\n        .*\\.md\n    )$\n"
        f"repos:\n- repo: {path}\n  rev: {sha}\n  hooks:\n  - id: check-patches\n")
    commit_all(target, "FlagScale's exclude")
    proc = pre_commit(precommit_env, target, "run", "check-patches", "--all-files")
    assert proc.returncode == 1 and "Passed" not in proc.stdout, proc.stdout + proc.stderr
    assert "[nothing-checked] all 2 stored patch(es) under hardware/ are excluded" in proc.stdout
