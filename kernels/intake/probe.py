"""Child process of `kernels import`: import one generated module and call it on every planned
case, inside the sandbox. Usage: `python -m flagbot.kernels.intake.probe REQUEST.json SCRATCH FD`.

Generated code runs here, never in the importing process. Results go back as frames on the
pipe FD (never a file, which the operator's code could rewrite later): `status` (how far it
got, for the reason of a rejection), `outputs` (what the operator returned per case; the parent
judges it against torch itself, intake/verdict.py) or, in a second run with `"step": "time"`
(--remeasure, once the parent found it accurate), `timing`; then `end`, and the process ends
at once with `os._exit`, so no exit handler of the operator's runs after the last frame. The
parent refuses any stream that is not exactly that.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any


def emit(fd: int, kind: str, data: bytes) -> None:
    os.write(fd, f"{kind} {len(data)}\n".encode("ascii"))
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def finish(fd: int, status: dict[str, Any]) -> None:
    """The last frames, then the end of this process (no exit handlers, no finalizers)."""
    emit(fd, "status", json.dumps(status).encode())
    emit(fd, "end", b"")
    os._exit(0)


def _last_line(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" (line {frames[-1].lineno})" if frames else ""
    return f"{type(exc).__name__}: {exc}{where}"


def import_module(path: Path, name: str) -> Any:
    """Compile and execute `path` in a fresh module registered as `name`."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path}: cannot be loaded")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _detach(value: Any) -> Any:
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().cpu().clone()
    if isinstance(value, (tuple, list)):
        return [_detach(v) for v in value]
    return f"returned {type(value).__name__}, not a tensor"


def call_cases(request: dict[str, Any], func: Any) -> dict[str, Any]:
    """What `func` returns (or the error it raises) per planned case."""
    import torch

    from flagbot.kernels.intake.verdict import plan_cases

    plan = plan_cases(request)
    outputs: dict[str, Any] = {}
    for dtype, case, seed, name in plan.keys():
        gen = torch.Generator(device=plan.device).manual_seed(seed)
        args, kwargs = plan.spec.make_inputs(case, dtype, plan.device, gen)
        try:
            outputs[name] = _detach(func(*args, **kwargs))
        except Exception as exc:  # a raising kernel is a per-case result
            outputs[name] = f"{type(exc).__name__}: {exc}"[:500]
    return outputs


def main(argv: list[str] | None = None) -> int:
    """Run the request; every path ends in `finish` (the parent judges what it sent)."""
    args = sys.argv[1:] if argv is None else argv
    request = json.loads(Path(args[0]).read_text(encoding="utf-8"))
    fd = int(args[2])
    status: dict[str, Any] = {"import": None, "called": False}
    try:
        module = import_module(Path(request["module"]), request["module_name"])
    except BaseException as exc:  # whatever generated code raises at import is its verdict
        status["import"] = f"does not import: {_last_line(exc)}"
        finish(fd, status)
    func: Any = getattr(module, request["entry"], None)
    if not callable(func):
        status["import"] = (f"defines no function {request['entry']!r}; name the operator's "
                            "function like the aten operator or set params.entry")
        finish(fd, status)
    status["import"] = "ok"
    if request.get("step") == "time":  # a second child, once the parent judged it accurate
        from flagbot.kernels.intake.remeasure import measure

        try:
            timing = measure(request, func)
        except Exception as exc:
            timing = {"status": "error", "error": _last_line(exc)}
        emit(fd, "timing", json.dumps(timing).encode())
        finish(fd, status)
    import torch

    buffer = io.BytesIO()
    torch.save(call_cases(request, func), buffer)
    emit(fd, "outputs", buffer.getvalue())
    status["called"] = True
    finish(fd, status)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
