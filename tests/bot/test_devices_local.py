"""End to end on the CPU: a `local` device runs `flagbot kernels check` in a child process on a
clean checkout of the head, and its check run completes with the interpreter's real results."""

from __future__ import annotations

from pathlib import Path

import pytest

from flagbot.bot.devices import local
from tests.bot.devices_support import (
    ROOT,
    deliver_pr,
    device_repo,
    dispatches,
    kernel_runs,
    open_device_pr,
)

NVIDIA = ROOT / "backends/_nvidia"


def backend_files() -> dict[str, str | bytes]:
    return {f"backends/_nvidia/{p.relative_to(NVIDIA).as_posix()}": p.read_bytes()
            for p in sorted(NVIDIA.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


@pytest.mark.slow
def test_pr_opened_to_completed_check_run_on_the_cpu(emu, settings) -> None:
    repo = device_repo(emu, extra=backend_files())
    softmax = (NVIDIA / "ops/softmax.py").read_text() + "\n# tuned\n"
    pr = open_device_pr(emu, repo, files={"backends/_nvidia/ops/softmax.py": softmax},
                        labels=("ci: cpu",))
    result = deliver_pr(emu, settings, repo)
    assert result["kernels"]["kernels"] == {"cpu": "ran"} and dispatches(emu) == []
    [check] = kernel_runs(emu, repo, pr["head"]["sha"], device="cpu")
    out = check["output"]
    assert check["status"] == "completed" and check["conclusion"] == "success", out
    assert out["title"] == "4 op(s) accurate; speed not measured (CPU)"
    for name in ("softmax", "rms_norm", "mm", "log_softmax"):
        assert f"| `{name}` | override |" in out["summary"]
    assert "CPU (Triton interpreter" in out["summary"] and "**unmeasured**" in out["summary"]
    assert "| cpu | ✅ success" in emu.comments(repo, 1)[0]["body"]


def test_the_time_limit_kills_the_child(tmp_path: Path) -> None:
    ran = local.run_check(tmp_path, ["sleep", "30"], tmp_path / "report.json", timeout_s=0.5)
    assert ran.timed_out and ran.report is None


def test_the_child_does_not_import_from_the_checkout(tmp_path: Path) -> None:
    # a PR shipping its own `flagbot` package must not replace the bot's harness
    (tmp_path / "flagbot").mkdir()
    (tmp_path / "flagbot/__init__.py").write_text("raise SystemExit('PR code ran as flagbot')\n")
    argv = local.command("nowhere", [], 1.3, 0.8, tmp_path / "r.json")
    ran = local.run_check(tmp_path, argv, tmp_path / "r.json", timeout_s=120)
    assert "PR code ran as flagbot" not in ran.tail and ran.exit_code == 2
