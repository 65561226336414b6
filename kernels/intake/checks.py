"""The checks a generated operator must pass before it is taken in, each in a child process.

1. its code compiles (in this process: compiling runs nothing);
2. it imports: executed in a fresh module in a child (flagbot.kernels.intake.probe), which
   then runs the harness's accuracy check against the aten operator (and, with --remeasure,
   times it on the GPU);
3. its own test passes: pytest on the written test file, in a child.
Children get a timeout; generated code never runs in the importing process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flagbot.kernels.intake.payload import Payload, module_text, syntax_error, test_text

PYTEST_TAIL = 1500  # characters of a failing test's output kept in the reason


@dataclass
class Plan:
    """One selected operator on its way in: names, category, payload, target paths."""

    name: str
    aten: str
    category: str
    payload: Payload
    selection: dict[str, Any]

    @property
    def module(self) -> str:
        return f"{self.category}/{self.name}.py"

    @property
    def test(self) -> str:
        return f"{self.category}/test_{self.name}.py"

    def shapes(self) -> list[Any]:
        return [c["shape"] for c in self.selection.get("configs", [])]

    def dtypes(self) -> list[str]:
        found = {c["dtype"] for c in self.selection.get("configs", [])}
        return sorted(found & {"float32", "float16", "bfloat16"}) or ["float32"]


@dataclass
class Outcome:
    """What the checks found: ok, or the reason; accuracy and timing figures when run."""

    ok: bool
    reason: str = ""
    accuracy: dict[str, Any] | None = None
    timing: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Settings:
    """How the checks run: child timeout (s), seeds, remeasure on the GPU, batch."""

    timeout: float = 300.0
    seeds: tuple[int, ...] = (0, 1)
    remeasure: bool = False
    batch: int = 2


def child_env() -> dict[str, str]:
    """This environment (the child imports the installed flagbot, as this process does), no
    bytecode files left in the checked folder."""
    env = dict(os.environ)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def write_files(folder: Path, plan: Plan) -> list[Path]:
    """Write the operator's module and test under `folder`; the paths written."""
    module, test = folder / plan.module, folder / plan.test
    module.parent.mkdir(parents=True, exist_ok=True)
    module.write_text(module_text(plan.payload, plan.name, plan.aten), encoding="utf-8")
    test.write_text(test_text(plan.payload, plan.name, module.name), encoding="utf-8")
    return [module, test]


def _probe(plan: Plan, folder: Path, settings: Settings) -> dict[str, Any]:
    request = {"module": str(folder / plan.module), "entry": plan.payload.entry,
               "module_name": f"flagbot_probe_{plan.name}", "aten": plan.aten,
               "name": plan.name, "params": plan.payload.call_params(),
               "shapes": plan.shapes(), "dtypes": plan.dtypes(), "seeds": list(settings.seeds),
               "remeasure": settings.remeasure, "batch": settings.batch,
               "configs": plan.selection.get("configs", [])}
    req, out = folder / f".probe-{plan.name}.json", folder / f".result-{plan.name}.json"
    req.write_text(json.dumps(request), encoding="utf-8")
    cmd = [sys.executable, "-m", "flagbot.kernels.intake.probe", str(req), str(out)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=settings.timeout,
                              env=child_env(), cwd=folder)
        crashed = proc.returncode != 0
        tail = (proc.stderr or proc.stdout)[-PYTEST_TAIL:]
    except subprocess.TimeoutExpired:
        crashed, tail = True, f"timed out after {settings.timeout:g} s"
    result: dict[str, Any] = json.loads(out.read_text()) if out.exists() else {}
    req.unlink(missing_ok=True)
    out.unlink(missing_ok=True)
    if crashed:
        step = "import" if not result.get("import") else (
            "accuracy check" if result.get("accuracy") is None else "timing")
        last = tail.strip().splitlines()[-1] if tail.strip() else "the process died"
        result["crash"] = (step, last)
    return result


def _pytest(plan: Plan, folder: Path, settings: Settings) -> str | None:
    test = folder / plan.test
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
           "--import-mode=importlib", "-o", "addopts=", f"--rootdir={test.parent}",
           f"--confcutdir={test.parent}", str(test)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=settings.timeout,
                              env=child_env(), cwd=test.parent)
    except subprocess.TimeoutExpired:
        return f"its test timed out after {settings.timeout:g} s"
    if proc.returncode == 0:
        return None
    if proc.returncode == 5:
        return "its test_func defines no test (pytest collected nothing)"
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    summary = next((ln for ln in reversed(lines) if "failed" in ln or "error" in ln),
                   lines[-1] if lines else proc.stderr.strip()[-200:])
    detail = next((ln.strip() for ln in lines if ln.lstrip().startswith("E ")), "")
    return f"its test fails: {summary.strip('= ')}" + (f" ({detail})" if detail else "")


def _accuracy_reason(acc: dict[str, Any] | None) -> str | None:
    if acc is None:
        return "the accuracy check did not run"
    if acc.get("status") == "error":
        return f"the harness could not check it: {acc.get('error')}"
    if acc.get("status") != "pass":
        first = acc.get("first_failure") or {}
        where = f" (first: {first.get('dtype')} {first.get('case')} seed {first.get('seed')}: " \
            f"{first.get('error')})" if first else ""
        return f"fails the accuracy check against torch: {acc.get('failed')} of " \
            f"{acc.get('cases')} cases outside tolerance{where}"
    return None


def check(plan: Plan, folder: Path, settings: Settings) -> Outcome:
    """Write the operator under `folder` and run every check; never raises for its code."""
    problem = syntax_error(plan.payload)
    if problem:
        return Outcome(False, problem)
    write_files(folder, plan)
    result = _probe(plan, folder, settings)
    crash: tuple[str, str] = result.get("crash") or ("", "")
    if result.get("import") != "ok":
        return Outcome(False, result.get("import") or f"does not import: {crash[1]}")
    if crash[0]:
        return Outcome(False, f"the {crash[0]} did not finish: {crash[1]}")
    acc = result.get("accuracy")
    reason = _accuracy_reason(acc)
    if reason:
        return Outcome(False, reason, accuracy=acc)
    failed_test = _pytest(plan, folder, settings)
    if failed_test:
        return Outcome(False, failed_test, accuracy=acc)
    return Outcome(True, accuracy=acc, timing=result.get("timing"))
