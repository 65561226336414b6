"""Child process of `kernels import`: import one generated module, check it, report JSON.

Generated code runs here, never in the importing process: a crash, a hang or a module-level
side effect ends with this process (the parent holds the timeout). Usage:
`python -m flagbot.kernels.intake.probe REQUEST.json RESULT.json`. The result file is
rewritten after each step, so after a timeout the parent knows how far it got.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import traceback
from pathlib import Path
from typing import Any


def _write(path: Path, result: dict[str, Any]) -> None:
    path.write_text(json.dumps(result, indent=1), encoding="utf-8")


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


def _accuracy(request: dict[str, Any], func: Any) -> dict[str, Any]:
    import torch

    from flagbot.kernels.accuracy import check_op
    from flagbot.kernels.backend_utils import interpreted
    from flagbot.kernels.intake.schema import build_spec, resolve

    op = resolve(request["aten"])
    wanted = [getattr(torch, d) for d in request["dtypes"]]
    spec = build_spec(op, request["name"], request["params"],
                      [tuple(s) for s in request["shapes"]], wanted)
    gpu = torch.cuda.is_available() and not interpreted()
    dtypes = [d for d in spec.dtypes if gpu or d in spec.interpreter_dtypes]
    skipped = [f"{str(d).removeprefix('torch.')}: the CPU interpreter computes bf16 wrongly"
               for d in spec.dtypes if d not in dtypes]
    if not dtypes:
        dtypes, skipped = [torch.float32], skipped + ["float32 checked instead"]
    device = torch.device("cuda" if gpu else "cpu")
    cases = spec.cases("full" if gpu else "ci")
    results = check_op(spec, func, cases, dtypes, device, tuple(request["seeds"]))
    failed = [r for r in results if not r.ok]
    rel = [r.max_rel_err for r in results if r.max_rel_err is not None]
    return {"status": "pass" if results and not failed else "fail", "cases": len(results),
            "failed": len(failed), "max_rel_err": max(rel) if rel else None,
            "first_failure": failed[0].to_json() if failed else None, "skipped": skipped,
            "shapes": "full" if gpu else "ci", "dtypes": [str(d).removeprefix("torch.")
                                                          for d in dtypes]}


def main(argv: list[str] | None = None) -> int:
    """Run the request; 0 when every step ran (the result says whether it passed)."""
    args = sys.argv[1:] if argv is None else argv
    request = json.loads(Path(args[0]).read_text(encoding="utf-8"))
    out = Path(args[1])
    result: dict[str, Any] = {"import": None, "accuracy": None, "timing": None}
    _write(out, result)
    try:
        module = import_module(Path(request["module"]), request["module_name"])
    except BaseException as exc:  # whatever generated code raises at import is its verdict
        result["import"] = f"does not import: {_last_line(exc)}"
        _write(out, result)
        return 0
    func = getattr(module, request["entry"], None)
    if not callable(func):
        result["import"] = (f"defines no function {request['entry']!r}; name the operator's "
                            "function like the aten operator or set params.entry")
        _write(out, result)
        return 0
    result["import"] = "ok"
    _write(out, result)
    if request.get("accuracy", True):
        try:
            result["accuracy"] = _accuracy(request, func)
        except Exception as exc:
            result["accuracy"] = {"status": "error", "error": _last_line(exc)}
        _write(out, result)
    if request.get("remeasure") and (result["accuracy"] or {}).get("status") == "pass":
        from flagbot.kernels.intake.remeasure import measure

        try:
            result["timing"] = measure(request, func)
        except Exception as exc:
            result["timing"] = {"status": "error", "error": _last_line(exc)}
        _write(out, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
