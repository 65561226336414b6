"""The one table of operators the harness knows: name -> spec. A new op is one module + one line.

Walked by tests/kernels/test_registry.py. Specs with `generic=None` are ops the library has no
kernel for: a backend that brings one is gated as a new op against torch native. Operators taken
in by `flagbot kernels import` are listed in kernels/experimental/_metadata.json, not here:
`lookup` reads that index (their specs come from the aten schema; they are new ops too).
"""

from __future__ import annotations

from flagbot.kernels.intake import experimental
from flagbot.kernels.ops import (
    add,
    addmm,
    argmax,
    bmm,
    cat,
    cumsum,
    div,
    embedding,
    exp,
    fill,
    gelu,
    index_select,
    layer_norm,
    log_softmax,
    mean,
    mm,
    mul,
    rms_norm,
    rsqrt,
    silu,
    softmax,
    sqrt,
    sub,
)
from flagbot.kernels.ops import max as max_op
from flagbot.kernels.ops import sum as sum_op
from flagbot.kernels.spec import OpSpec

OPS: dict[str, OpSpec] = {
    "add": add.SPEC,
    "mul": mul.SPEC,
    "gelu": gelu.SPEC,
    "silu": silu.SPEC,
    "softmax": softmax.SPEC,
    "layer_norm": layer_norm.SPEC,
    "rms_norm": rms_norm.SPEC,
    "sum": sum_op.SPEC,
    "mean": mean.SPEC,
    "mm": mm.SPEC,
    "log_softmax": log_softmax.SPEC,
    # No generic kernel: the reference is the aten op (kernels/ops/_aten.py). The operators
    # vendors' FlagGems folders override most often (docs/kernels.md, "Coverage").
    "sub": sub.SPEC,
    "div": div.SPEC,
    "sqrt": sqrt.SPEC,
    "rsqrt": rsqrt.SPEC,
    "exp": exp.SPEC,
    "fill": fill.SPEC,
    "addmm": addmm.SPEC,
    "bmm": bmm.SPEC,
    "max": max_op.SPEC,
    "argmax": argmax.SPEC,
    "cumsum": cumsum.SPEC,
    "embedding": embedding.SPEC,
    "index_select": index_select.SPEC,
    "cat": cat.SPEC,
}


def by_aten_name() -> dict[str, OpSpec]:
    """aten name (with and without overload) -> spec; the overload-less form only if unique."""
    table: dict[str, OpSpec] = {}
    for spec in OPS.values():
        for aten in spec.aten:
            table[aten] = spec
            table.setdefault(aten.split(".")[0], spec)
    return table


def experimental_ops() -> dict[str, OpSpec]:
    """Specs of the imported operators (kernels/experimental), name -> spec; read each call."""
    specs: dict[str, OpSpec] = experimental.specs()
    return specs


def lookup(name: str) -> OpSpec | None:
    """A spec by generic name, aten name (`softmax.int`) or `aten::`-prefixed aten name; then
    among the imported operators, by name or aten name."""
    name = name.removeprefix("aten::")
    found = OPS.get(name) or by_aten_name().get(name)
    if found is not None:
        return found
    imported = experimental_ops()
    by_aten = {a: s for s in imported.values() for a in (*s.aten, s.aten[0].split(".")[0])}
    return imported.get(name) or by_aten.get(name)
