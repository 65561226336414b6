"""Tiny generated-operator payloads and timing files for the import pipeline's tests.

The kernels are real Triton (one program per 1024 elements), so they run on the CPU
interpreter in a few milliseconds per case.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

UNARY = '''\
import torch
import triton
import triton.language as tl


@triton.jit
def _{name}_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, {expr}, mask=mask)


def {name}(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    _{name}_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    return out
'''
# The tests generators write run where the kernels compile: on the GPU when there is one
# (compiled Triton cannot read CPU tensors), else on the CPU interpreter.
TEST = '''\
import torch


def test_{name}():
    x = torch.randn(300, device="cuda" if torch.cuda.is_available() else "cpu")
    torch.testing.assert_close({name}(x), {reference}(x))
'''
LAX_TEST = '''\
def test_{name}_runs():
    import torch
    x = torch.ones(8, device="cuda" if torch.cuda.is_available() else "cpu")
    assert {name}(x).shape == (8,)
'''


def code(name: str, expr: str) -> str:
    """A unary elementwise Triton operator `name` computing `expr` of `x`."""
    return UNARY.format(name=name, expr=expr)


def payload(name: str, *, expr: str | None = None, test: str | None = None,
            source: str | None = None, op_name: str | None = None) -> dict[str, Any]:
    """A payload in the generators' format; a correct abs/neg unless told otherwise."""
    exprs = {"abs": "tl.abs(x)", "neg": "-x"}
    return {"op_name": op_name or f"aten::{name}",
            "code": source if source is not None else code(name, expr or exprs[name]),
            "test_func": test or TEST.format(name=name, reference=f"torch.{name}"),
            "params": {}, "info": {"total": 10, "success": 10, "failed": 0}}


def write_json(path: Path, value: Any) -> Path:
    """Write `value` as JSON, making parent folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=1), encoding="utf-8")
    return path


def selection(batch: int, *names: str) -> dict[str, Any]:
    """A selection file as `kernels filter` writes it, selecting `names`."""
    figure = "avg_speedup_vs_flaggems" if batch == 1 else "avg_relative_to_cuda"
    base = "flaggems_time" if batch == 1 else "cuda_time"
    ops = {n: {figure: 0.8, "configs": [{"shape": [1000], "dtype": "float32",
                                         "your_time": 0.4, base: 0.5}]} for n in names}
    return {"schema": "flagbot.kernels.selection/1", "batch": batch,
            "total_operators": len(ops), "total_configs": len(ops), "threshold": 1.25,
            "min_config_speed": 0.5, "criterion": "test", "operators": ops, "rejected": {}}
