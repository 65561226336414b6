"""The checks a generated operator must pass before it is taken in, each in a sandboxed child.

1. its code compiles (in this process: compiling runs nothing);
2. it imports and is called on every planned case in a child (flagbot.kernels.intake.probe);
   this process judges what came back against torch (intake/verdict.py), and, with
   --remeasure, a second child times an accurate operator on the GPU;
3. its own test passes: pytest on the written test file, in a child.

Every child runs under bubblewrap (flagbot.kernels.bubblewrap): the operator's folder
read-only, one scratch folder writable, nothing else of this machine visible, no network, an
empty environment, and every process it started killed at the time limit before the next step.
The files checked are the files imported: their digests are taken when written and compared
after the last child and again when the destination is assembled. `sandbox=False` (the
command's --no-sandbox) runs the children as plain processes of this user: for machines that
cannot run bwrap and payloads from a trusted generator only.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flagbot.kernels import bubblewrap
from flagbot.kernels.intake import verdict
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
    digests: dict[str, str] = field(default_factory=dict)  # checked file -> sha256


@dataclass(frozen=True)
class Settings:
    """How the checks run: child timeout (s), seeds, remeasure on the GPU, batch."""

    timeout: float = 300.0
    seeds: tuple[int, ...] = (0, 1)
    remeasure: bool = False
    batch: int = 2
    sandbox: bool = True


# Paths inside the sandbox.
HARNESS, OP, SCRATCH = "/flagbot", "/work/op", "/work/scratch"
PASSED_ENV = ("CUDA_VISIBLE_DEVICES", "TRITON_INTERPRET")
# In the sandbox flagbot's device side is mounted at HARNESS and put first on the path; without
# it the child imports the installed flagbot, as this process does (isolated mode keeps
# site-packages). Either way the operator's folder is only its cwd, never on its path.
ON_PATH = "import sys; sys.path.insert(0, sys.argv.pop(1)); "
BOOT = "from flagbot.kernels.intake.probe import main; raise SystemExit(main(sys.argv[1:]))"
PYTEST_BOOT = "import sys, pytest; raise SystemExit(pytest.main(sys.argv[1:]))"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_child(boot: str, folder: Path, scratch: Path, args: Sequence[str],
              settings: Settings, channel_limit: int = 0) -> bubblewrap.Ended:
    """`boot` with `args` in a child that sees `folder` (read-only) and `scratch` (writable);
    in `args`, `{op}` and `{scratch}` stand for where those two are for the child."""
    passed = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
    home = scratch / "home"
    home.mkdir(parents=True, exist_ok=True)
    if not settings.sandbox:
        here = [a.replace("{op}", str(folder)).replace("{scratch}", str(scratch)) for a in args]
        env = {"PATH": bubblewrap.PATH, "HOME": str(home), "PYTHONDONTWRITEBYTECODE": "1",
               "TRITON_CACHE_DIR": str(home / "triton"), **passed}
        return bubblewrap.run([sys.executable, "-I", "-c", "import sys; " + boot, *here],
                              settings.timeout, env=env, cwd=folder, channel_limit=channel_limit)
    walls = bubblewrap.Walls(read_only={str(folder): OP}, writable={str(scratch): SCRATCH},
                             cwd=OP, harness=HARNESS,
                             env={"HOME": f"{SCRATCH}/home",
                                  "TRITON_CACHE_DIR": f"{SCRATCH}/home/triton", **passed})
    inside = [a.replace("{op}", OP).replace("{scratch}", SCRATCH) for a in args]
    argv = walls.argv(bubblewrap.find(), [sys.executable, "-I", "-c", ON_PATH + boot, HARNESS,
                                           *inside])
    return bubblewrap.run(argv, settings.timeout, channel_limit=channel_limit)


def write_files(folder: Path, plan: Plan) -> list[Path]:
    """Write the operator's module and test under `folder`; the paths written."""
    module, test = folder / plan.module, folder / plan.test
    module.parent.mkdir(parents=True, exist_ok=True)
    module.write_text(module_text(plan.payload, plan.name, plan.aten), encoding="utf-8")
    test.write_text(test_text(plan.payload, plan.name, module.name), encoding="utf-8")
    return [module, test]


def _request(plan: Plan, settings: Settings, step: str, op_dir: str) -> dict[str, Any]:
    return {"module": f"{op_dir}/{plan.module}", "entry": plan.payload.entry,
            "module_name": f"flagbot_probe_{plan.name}", "aten": plan.aten,
            "name": plan.name, "params": plan.payload.call_params(),
            "shapes": plan.shapes(), "dtypes": plan.dtypes(), "seeds": list(settings.seeds),
            "batch": settings.batch, "configs": plan.selection.get("configs", []), "step": step}


def _probe(plan: Plan, folder: Path, settings: Settings, step: str = "call") -> dict[str, Any]:
    """Run the probe for `step` ("call", "time"); what it sent, read as untrusted data, and
    for "call" the accuracy verdict made here."""
    scratch = folder.parent / f".scratch-{plan.name}-{step}"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    request = _request(plan, settings, step, OP if settings.sandbox else str(folder))
    req = folder / f".probe-{plan.name}-{step}.json"
    req.write_text(json.dumps(request), encoding="utf-8")
    try:
        ended = run_child(BOOT, folder, scratch,
                          ["{op}/" + req.name, "{scratch}", bubblewrap.CHANNEL], settings,
                          channel_limit=verdict.MAX_OUTPUT_BYTES + (1 << 20))
        return _read_probe(request, ended, settings, step)
    finally:
        req.unlink(missing_ok=True)
        shutil.rmtree(scratch, ignore_errors=True)


def _read_probe(request: dict[str, Any], ended: bubblewrap.Ended, settings: Settings,
                step: str) -> dict[str, Any]:
    if ended.timed_out:
        return {"import": None, "crash": ("run", f"timed out after {settings.timeout:g} s")}
    try:
        if ended.channel_overflow:
            raise verdict.Tampered(f"it sent more than {verdict.MAX_OUTPUT_BYTES >> 20} MiB")
        sent = verdict.frames(ended.channel)
    except verdict.Tampered as exc:
        tail = ended.output.decode("utf-8", "replace")[-PYTEST_TAIL:].strip()
        if "ended before" in str(exc):  # it died: its last words say why
            return {"import": None, "crash": ("run", tail.splitlines()[-1] if tail else str(exc))}
        return {"import": None, "crash": ("tamper", str(exc))}
    status = _loads(sent.get("status", b""))
    said = status.get("import")
    result: dict[str, Any] = {"import": said if isinstance(said, str) else None}
    if result["import"] != "ok":
        return result
    if step == "time":
        result["timing"] = _loads(sent.get("timing", b"")) or None
        return result
    try:
        result["accuracy"] = verdict.judge(request, verdict.load_outputs(sent.get("outputs", b"")))
    except ValueError as exc:
        result["accuracy"] = {"status": "error", "error": str(exc)}
    return result


def _loads(data: bytes) -> dict[str, Any]:
    try:
        value = json.loads(data.decode("utf-8"))
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _pytest(plan: Plan, folder: Path, settings: Settings) -> str | None:
    scratch = folder.parent / f".scratch-{plan.name}-test"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    test = "{op}/" + plan.test
    parent = "{op}/" + str(Path(plan.test).parent)
    try:
        ended = run_child(PYTEST_BOOT, folder, scratch,
                          ["-q", "-p", "no:cacheprovider", "--import-mode=importlib", "-o",
                           "addopts=", f"--rootdir={parent}", f"--confcutdir={parent}", test],
                          settings)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if ended.timed_out:
        return f"its test timed out after {settings.timeout:g} s"
    if ended.code == 0:
        return None
    if ended.code == 5:
        return "its test_func defines no test (pytest collected nothing)"
    lines = [ln for ln in ended.output.decode("utf-8", "replace").splitlines() if ln.strip()]
    summary = next((ln for ln in reversed(lines) if "failed" in ln or "error" in ln),
                   lines[-1] if lines else f"exit {ended.code}")
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
    written = write_files(folder, plan)
    digests = {p.relative_to(folder).as_posix(): digest(p) for p in written}
    outcome = _checked(plan, folder, settings)
    changed = [rel for rel, d in digests.items()
               if not (folder / rel).is_file() or digest(folder / rel) != d]
    if changed:
        return Outcome(False, f"changed its own files while being checked ({', '.join(changed)})")
    outcome.digests = digests
    return outcome


def _checked(plan: Plan, folder: Path, settings: Settings) -> Outcome:
    result = _probe(plan, folder, settings)
    crash: tuple[str, str] = result.get("crash") or ("", "")
    if crash[0] == "tamper":
        return Outcome(False, crash[1])
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
    timing = None
    if settings.remeasure:
        timed = _probe(plan, folder, settings, step="time")
        timing = timed.get("timing") if not timed.get("crash") else \
            {"status": "error", "error": f"the timing did not finish: {timed['crash'][1]}"}
    return Outcome(True, accuracy=acc, timing=timing)
