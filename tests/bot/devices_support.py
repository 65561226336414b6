"""Helpers for the kernel-check tests: a repository with devices configured, reports, artifacts."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

from flagbot.bot.devices.ids import Request
from flagbot.bot.settings import Settings
from testing.github_emulator import Emulator
from testing.github_emulator.state import EmuRepo
from tests.bot.handlers_support import bot_for

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = (ROOT / ".github/workflows/device-check.yml").read_text(encoding="utf-8")
CONFIG = """\
devices:
  a_x100:
    runner: [self-hosted, a_x100]
    timeout_minutes: 30
  cpu:
    runner: local
    backend: backends/_nvidia
kernels:
  override_min_speedup: 1.25
"""
BACKEND = "backends/_a_x100/ops/softmax.py"


def device_repo(emu: Emulator, config: str = CONFIG, extra: dict[str, str | bytes] | None = None) -> EmuRepo:
    """A repository whose default branch has the workflow and a `devices:` config."""
    files: dict[str, str | bytes] = {
        "README.md": "host\n", ".github/workflows/device-check.yml": WORKFLOW,
        ".github/flagbot.yml": config, "backends/_a_x100/ops/__init__.py": "\n",
        BACKEND: "def softmax(x, dim):\n    return x\n", **(extra or {})}
    repo = emu.create_repo("flagos/FlagGems", files=files)
    emu.set_permission(repo, "alice", "write")
    emu.set_permission(repo, "maint", "maintain")
    return repo


def open_device_pr(emu: Emulator, repo: EmuRepo, *, user: str = "alice",
                   files: dict[str, str | bytes] | None = None, labels: tuple[str, ...] = ("ci: a_x100",),
                   branch: str = "feature") -> dict[str, Any]:
    """A PR changing the a_x100 backend, with the `ci:` labels given."""
    emu.push_commit(repo, branch=branch, files=files or {BACKEND: "def softmax(x, dim):\n    return x * 1\n"})
    pr = emu.open_pull(repo, head=branch, user=user)
    if labels:
        emu.label_issue(repo, pr["number"], *labels)
    return emu.pull(repo, pr["number"])


def deliver_pr(emu: Emulator, settings: Settings, repo: EmuRepo, number: int = 1,
               action: str = "opened", delivery: str = "d-1", **extra: Any) -> dict[str, Any]:
    payload = emu.payload(event="pull_request", action=action, repo=repo, number=number, **extra)
    return bot_for(settings).run(delivery, "pull_request", payload)


def dispatched_run(emu: Emulator, settings: Settings, repo: EmuRepo) -> tuple[dict[str, Any], dict[str, Any]]:
    """Open the device PR and deliver it: (the PR, the one workflow run it started)."""
    pr = open_device_pr(emu, repo)
    deliver_pr(emu, settings, repo)
    [run] = emu.workflow_runs(repo)
    return pr, run


def deliver_run(emu: Emulator, settings: Settings, repo: EmuRepo, run_id: int,
                action: str = "completed", event: str = "workflow_run",
                delivery: str | None = None) -> dict[str, Any]:
    payload = emu.payload(event=event, action=action, repo=repo, run_id=run_id)
    return bot_for(settings).run(delivery or f"w-{run_id}-{action}", event, payload)


def kernel_runs(emu: Emulator, repo: EmuRepo, sha: str, device: str = "a_x100") -> list[dict[str, Any]]:
    """The kernels check runs of `device` on `sha`, oldest first."""
    return [r for r in emu.check_runs(repo, sha) if r["name"] == f"flagbot / kernels ({device})"]


def dispatches(emu: Emulator) -> list[dict[str, Any]]:
    """The bodies of the workflow dispatch calls the bot made."""
    return [c.json for c in emu.writes() if c.path.endswith("/dispatches")]  # type: ignore[misc]


def op(name: str, verdict: str = "pass", ok: bool = True, source: str | None = "ops/softmax.py",
       reason: str = "accurate; speedup 1.5x", speedup: float | None = 1.5) -> dict[str, Any]:
    """One op object of a report."""
    return {"op": name, "aten": f"{name}.int", "kind": "override", "function": name, "baseline": "generic",
            "accuracy": {"status": "pass" if ok else "fail", "skipped": [], "cases": [
                {"dtype": "float16", "case": "4x33", "seed": 0, "ok": ok, "max_abs_err": 1e-4,
                 "max_rel_err": 2e-3 if ok else 0.5, "rtol": 1e-3, "atol": 1e-4, "error": None}]},
            "performance": {"status": "measured", "reason": None, "cases": []},
            "verdict": {"status": verdict, "reason": reason,
                        "value": None if speedup is None else {"median": speedup, "low": speedup, "high": speedup}},
            "source": "ops", "location": {"path": source, "line": 3} if source else None}


def report(ops: list[dict[str, Any]], *, exit_code: int = 0, min_speedup: float = 1.25,
           backend_path: str = "/home/runner/work/FlagGems/src/backends/_a_x100") -> dict[str, Any]:
    """A schema-1 report of a GPU run."""
    return {"schema": "flagbot.kernels.report", "schema_version": 2,
            "tool": {"name": "flagbot kernels", "version": "0.1.0"}, "created": "2026-11-26T00:00:00+00:00",
            "command": ["kernels", "check"],
            "environment": {"python": "3.11", "torch": "2.11.0", "triton": "3.6.0", "numpy": "2",
                            "platform": "Linux", "interpreter": False,
                            "device": {"name": "A-X100", "capability": "9.0"}},
            "options": {"shapes": "full", "ops": None, "dtypes": None, "seeds": [0],
                        "thresholds": {"override_min_speedup": min_speedup,
                                       "new_op_min_fraction_of_native": 0.8, "min_spread": 0.02},
                        "near_fails": False, "baseline": "auto"},
            "baseline": {"name": "generic", "version": "0.1.0", "requested": "auto", "ops": None, "note": None},
            "backend": {"path": backend_path, "form": "specific_ops", "vendor_name": "ax",
                        "device_name": "ax", "unused_ops": [], "error": None},
            "ops": ops, "summary": {"verdicts": {}, "exit_code": exit_code}}


def zipped(files: dict[str, bytes]) -> bytes:
    """A zip holding `files`."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buf.getvalue()


def finish_run(emu: Emulator, repo: EmuRepo, run_id: int, doc: dict[str, Any] | bytes | None,
               conclusion: str = "success") -> None:
    """The runner finished `run_id` and uploaded `doc` as its report artifact (None: nothing)."""
    run = next(r for r in emu.workflow_runs(repo) if r["id"] == run_id)
    request = Request.from_title(run["display_title"])
    assert request is not None
    if doc is not None:
        data = doc if isinstance(doc, bytes) else zipped({"report.json": json.dumps(doc).encode()})
        emu.add_artifact(repo, run_id, request.artifact, data)
    emu.set_workflow_run(repo, run_id, "completed", conclusion)
