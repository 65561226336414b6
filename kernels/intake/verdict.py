"""A generated operator's accuracy, judged by the importing process from what its sandboxed
child returned.

The child (`probe.py`) imports the operator and calls it on every (dtype, case, seed) this
module plans, and saves what came back. The verdict is made here, never there: this process
draws the same inputs from the same seeds, computes torch's reference itself and compares. A
child that rewrites its files, prints a fake result or exits early can only fail its own
check; it cannot report a pass.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

import torch

from flagbot.kernels.accuracy import AccuracyCase, judge_case
from flagbot.kernels.backend_utils import interpreted
from flagbot.kernels.device import default_device
from flagbot.kernels.intake.schema import build_spec, resolve
from flagbot.kernels.spec import Case, OpSpec

# Outputs a child may hand back for judging (its file-size limit stops it earlier anyway).
MAX_OUTPUT_BYTES = 1024 * 1024 * 1024


@dataclass
class CasePlan:
    """What to call the operator on: spec, cases, dtypes, seeds, device, and what was left out."""

    spec: OpSpec
    cases: list[Case]
    dtypes: list[torch.dtype]
    seeds: tuple[int, ...]
    device: torch.device
    skipped: list[str]
    shapes: str

    def keys(self) -> list[tuple[torch.dtype, Case, int, str]]:
        return [(dtype, case, seed, key(dtype, case, seed))
                for dtype in self.dtypes for case in self.cases for seed in self.seeds]


def key(dtype: torch.dtype, case: Case, seed: int) -> str:
    return f"{str(dtype).removeprefix('torch.')}|{case.id}|{seed}"


def plan_cases(request: dict[str, Any]) -> CasePlan:
    """The same plan in the child and here: from the request alone."""
    op = resolve(request["aten"])
    wanted = [getattr(torch, d) for d in request["dtypes"]]
    spec = build_spec(op, request["name"], request["params"],
                      [tuple(s) for s in request["shapes"]], wanted)
    # the vendor's accelerator, whichever torch knows (not only CUDA); the CPU interpreter else
    found, _ = default_device()
    gpu = found.type != "cpu" and not interpreted()
    dtypes = [d for d in spec.dtypes if gpu or d in spec.interpreter_dtypes]
    skipped = [f"{str(d).removeprefix('torch.')}: the CPU interpreter computes bf16 wrongly"
               for d in spec.dtypes if d not in dtypes]
    if not dtypes:
        dtypes, skipped = [torch.float32], skipped + ["float32 checked instead"]
    shapes = "full" if gpu else "ci"
    return CasePlan(spec, list(spec.cases(shapes)), dtypes, tuple(request["seeds"]),
                    found if gpu else torch.device("cpu"), skipped, shapes)


class Tampered(ValueError):
    """The child's channel holds something other than the probe's frames."""


def frames(stream: bytes) -> dict[str, bytes]:
    """The probe's frames (`<kind> <length>\\n<bytes>`), each kind at most once, ending with
    `end` and nothing after it; anything else raises Tampered."""
    found: dict[str, bytes] = {}
    at = 0
    while at < len(stream):
        newline = stream.find(b"\n", at, at + 64)
        head = stream[at:newline].decode("ascii", "replace").split(" ") if newline != -1 else []
        if len(head) != 2 or head[0] not in ("status", "outputs", "timing", "end") \
                or not head[1].isdigit() or head[0] in found:
            raise Tampered("its process wrote something other than the probe's results to the "
                           "results channel")
        size = int(head[1])
        body = stream[newline + 1:newline + 1 + size]
        if len(body) != size:
            raise Tampered("its results were cut short")
        found[head[0]] = body
        at = newline + 1 + size
        if head[0] == "end":
            if at != len(stream):
                raise Tampered("its process wrote to the results channel after the probe "
                               "finished")
            return found
    raise Tampered("its process ended before the probe finished")


def load_outputs(data: bytes) -> dict[str, Any]:
    """The outputs frame, read as tensors and strings only (no pickled objects)."""
    if len(data) > MAX_OUTPUT_BYTES:
        raise ValueError(f"its outputs are over {MAX_OUTPUT_BYTES >> 20} MiB")
    try:
        loaded = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as exc:  # whatever the child sent, it is not usable
        raise ValueError(f"its outputs cannot be read ({type(exc).__name__})") from exc
    return loaded if isinstance(loaded, dict) else {}


def judge(request: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    """The accuracy result (as the import records it) of `outputs` against torch."""
    plan = plan_cases(request)
    results: list[AccuracyCase] = []
    for dtype, case, seed, name in plan.keys():
        got = outputs.get(name, "no output for this case (the operator did not get this far)")
        if not isinstance(got, (str, torch.Tensor, tuple, list)):
            got = "an output that is not a tensor"
        results.append(judge_case(plan.spec, case, dtype, plan.device, seed, got))
    failed = [r for r in results if not r.ok]
    rel = [r.max_rel_err for r in results if r.max_rel_err is not None]
    return {"status": "pass" if results and not failed else "fail", "cases": len(results),
            "failed": len(failed), "max_rel_err": max(rel) if rel else None,
            "first_failure": failed[0].to_json() if failed else None, "skipped": plan.skipped,
            "shapes": plan.shapes,
            "dtypes": [str(d).removeprefix("torch.") for d in plan.dtypes]}
