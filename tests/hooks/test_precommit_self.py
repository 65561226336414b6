"""This repository's own .pre-commit-config.yaml passes on a snapshot of the repository,
and every manifest hook is wired to a console script, a module `main` and the docs."""

from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

PROJECT = Path(__file__).resolve().parents[2]
MANIFEST = yaml.safe_load((PROJECT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
tomllib = pytest.importorskip("tomllib")  # Python 3.11+
SCRIPTS = tomllib.loads((PROJECT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]


@pytest.mark.parametrize("hook", MANIFEST, ids=[h["id"] for h in MANIFEST])
def test_manifest_hook_has_script_main_and_docs(hook: dict[str, object]) -> None:
    entry = str(hook["entry"]).split()[0]
    module_name, func = SCRIPTS[entry].split(":")
    assert callable(getattr(importlib.import_module(module_name), func))
    assert f"`{hook['id']}`" in (PROJECT / "docs" / "hooks.md").read_text(encoding="utf-8")


# paths each hook must be handed in flagbot's layout and in the real FlagGems / FlagScale ones
SELECTS = {
    "check-vendor-backend": ["backends/_acme/ops/add.py",
                             "src/flag_gems/runtime/backend/_enflame/gcu400/ops/__init__.py"],
    "check-patches": ["hardwares/A_X100/aaaa1111/aaaa1111.patch",
                      "hardware/metax_C500/a44556c0/a44556c0.patch",
                      "hardware/bi_V150/758e33e0/758e33e0.patch.encrypted"],
    "check-hetero": ["hardwares/hetero.txt", "hardware/hetero.txt", "tools/patch/hetero.txt",
                     "flagscale/patch/hetero.txt", ".github/flagbot.yml"],
    "check-routing": ["backends.conf"],
    "check-plugins": ["vllm_fl/dispatch/config/metax.yaml", "sglang_fl/dispatch/config/musa.yaml",
                      "vllm_fl/dispatch/backends/vendor/metax/register_ops.py",
                      "sglang_fl/dispatch/backends/flagos/register_ops.py", "vllm_fl/utils.py",
                      "megatron/plugin/override_registry.py",
                      "megatron/plugin/platform/platform_npu.py",
                      "megatron/core/fusions/fused_softmax.py"],
}


@pytest.mark.parametrize("hook", MANIFEST, ids=[h["id"] for h in MANIFEST])
def test_manifest_patterns_select_every_layout(hook: dict[str, object]) -> None:
    pattern = re.compile(str(hook["files"]))
    assert [p for p in SELECTS[str(hook["id"])] if not pattern.search(p)] == []


@pytest.mark.precommit
def test_own_pre_commit_config_passes_on_a_snapshot(tmp_path: Path) -> None:
    snap = tmp_path / "snap"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for part in (".pre-commit-config.yaml", "hooks", "backends", "hardwares", ".github", "testing"):
        src = PROJECT / part
        if src.is_dir():
            shutil.copytree(src, snap / part, ignore=ignore)
        elif src.is_file():
            snap.mkdir(exist_ok=True)
            shutil.copy2(src, snap / part)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_DIR")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", PRE_COMMIT_COLOR="never",
               PRE_COMMIT_HOME=str(tmp_path / "home"),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")
    for args in (["init", "-q"], ["add", "-A"], ["-c", "commit.gpgsign=false", "commit", "-qm", "s"]):
        subprocess.run(["git", *args], cwd=snap, env=env, check=True)
    proc = subprocess.run([str(Path(sys.executable).with_name("pre-commit")), "run", "--all-files"],
                          cwd=snap, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "flagbot check vendor backend folders" in proc.stdout and "Failed" not in proc.stdout
    assert proc.stdout.count("Passed") >= 1, proc.stdout
