"""`kernels import --remeasure`: time a generated operator on this GPU instead of trusting the
supplied numbers. Runs in the probe's child process; all timing goes through kernels/timing.py.

Batch 2 pairs the candidate with torch native in one interleaved measurement. Batch 1 pairs it
with FlagGems (the aten operator called inside `flag_gems.use_gems()`), measured in its own
interleaved run so that FlagGems' dispatch never leaks into the native timing.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import Any

import torch

from flagbot.kernels import timing
from flagbot.kernels.device import resolve as resolve_device
from flagbot.kernels.intake.schema import build_spec, resolve
from flagbot.kernels.spec import Case


def _median_ms(samples: list[float]) -> float:
    return round(timing.summary(samples)["median"] / 1000.0, 6)


def measure(request: dict[str, Any], func: Callable[..., Any]) -> dict[str, Any]:
    """Per config: your_time with cuda_time (batch 2) or flaggems_time (batch 1), in ms."""
    op = resolve(request["aten"])
    spec = build_spec(op, request["name"], request["params"])
    dev = resolve_device()  # the vendor's accelerator through its own torch module
    device = dev.torch_device
    gems: Any = None
    if request["batch"] == 1:
        # Optional: only a batch 1 remeasure needs FlagGems, and the parent checked it is here.
        gems = importlib.import_module("flag_gems")
    rows: list[dict[str, Any]] = []
    for config in request["configs"]:
        dtype = getattr(torch, config["dtype"])
        case = Case(tuple(config["shape"]))
        gen = torch.Generator(device=device).manual_seed(0)
        args, kwargs = spec.make_inputs(case, dtype, device, gen)
        candidate = functools.partial(func, *args, **kwargs)
        baseline = functools.partial(op.func, *args, **kwargs)

        row: dict[str, Any] = {"shape": config["shape"], "dtype": config["dtype"]}
        if gems is None:
            m = timing.bench({"candidate": candidate, "native": baseline}, dev)
            row["cuda_time"] = _median_ms(m.samples["native"])
        else:
            with gems.use_gems():
                m = timing.bench({"candidate": candidate, "flaggems": baseline}, dev)
            row["flaggems_time"] = _median_ms(m.samples["flaggems"])
        row["your_time"] = _median_ms(m.samples["candidate"])
        row["mode"] = m.mode
        rows.append(row)
        empty_cache = getattr(dev.module, "empty_cache", None)
        if empty_cache is not None:
            empty_cache()
    return {"status": "measured", "configs": rows, "device": timing.device_metadata()}
