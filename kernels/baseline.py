"""The op an override would really replace: FlagGems' own kernel when `flag_gems` imports, else
the bundled generic kernel. `--baseline flaggems|generic|auto` picks; the report records which.

FlagGems' functions are taken from the table its `enable()` registers (aten name -> function,
with the per-architecture replacements already applied), each wrapped to the generic op's
signature, so the harness calls both the same way.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from flagbot.kernels import __version__
from flagbot.kernels.spec import OpSpec

CHOICES = ("auto", "flaggems", "generic")

Adapter = Callable[[Callable[..., Any]], Callable[..., torch.Tensor]]


def _softmax_like(fn: Callable[..., Any]) -> Callable[..., torch.Tensor]:
    def call(x: torch.Tensor, dim: int = -1, dtype: torch.dtype | None = None) -> torch.Tensor:
        out: torch.Tensor = fn(x if dtype is None else x.to(dtype), dim, False)
        return out
    return call


def _layer_norm(fn: Callable[..., Any]) -> Callable[..., torch.Tensor]:
    def call(x: torch.Tensor, normalized_shape: Any, weight: torch.Tensor | None = None,
             bias: torch.Tensor | None = None, eps: float = 1e-5) -> torch.Tensor:
        out: torch.Tensor = fn(x, list(normalized_shape), weight, bias, eps)[0]
        return out
    return call


def _rms_norm(fn: Callable[..., Any]) -> Callable[..., torch.Tensor]:
    def call(x: torch.Tensor, normalized_shape: Any, weight: torch.Tensor | None = None,
             eps: float | None = None) -> torch.Tensor:
        out: torch.Tensor = fn(x, list(normalized_shape), weight,
                               torch.finfo(x.dtype).eps if eps is None else eps)
        return out
    return call


def _reduction(fn: Callable[..., Any]) -> Callable[..., torch.Tensor]:
    def call(x: torch.Tensor, dim: Any, keepdim: bool = False, *,
             dtype: torch.dtype | None = None) -> torch.Tensor:
        out: torch.Tensor = fn(x, dim, keepdim, dtype=dtype)
        return out
    return call


def _as_is(fn: Callable[..., Any]) -> Callable[..., torch.Tensor]:
    return fn


# generic op name -> (the aten name FlagGems registers, wrapper to the generic signature)
FLAGGEMS_OPS: dict[str, tuple[str, Adapter]] = {
    "add": ("add.Tensor", _as_is),
    "mul": ("mul.Tensor", _as_is),
    "gelu": ("gelu", _as_is),
    "silu": ("silu", _as_is),
    "softmax": ("_softmax", _softmax_like),
    "log_softmax": ("_log_softmax", _softmax_like),
    "layer_norm": ("native_layer_norm", _layer_norm),
    "rms_norm": ("rms_norm", _rms_norm),
    "sum": ("sum.dim_IntList", _reduction),
    "mean": ("mean.dim", _reduction),
    "mm": ("mm", _as_is),
    # Specs without a generic kernel are called with the aten schema: FlagGems' functions as is.
    "sub": ("sub.Tensor", _as_is),
    "div": ("div.Tensor", _as_is),
    "sqrt": ("sqrt", _as_is),
    "rsqrt": ("rsqrt", _as_is),
    "exp": ("exp", _as_is),
    "fill": ("fill.Scalar", _as_is),
    "addmm": ("addmm", _as_is),
    "bmm": ("bmm", _as_is),
    "max": ("max.dim", _as_is),
    "argmax": ("argmax", _as_is),
    "cumsum": ("cumsum", _as_is),
    "embedding": ("embedding", _as_is),
    "index_select": ("index_select", _as_is),
    "cat": ("cat", _as_is),
}


class BaselineUnavailable(Exception):
    """`--baseline flaggems` was asked for, but `flag_gems` does not import here."""


@dataclass
class Baseline:
    """Which library the overrides are gated against, its version, and its ops by generic name."""

    name: str  # "flaggems" or "generic"
    version: str
    requested: str
    ops: dict[str, Callable[..., torch.Tensor]] = field(default_factory=dict)
    note: str | None = None

    def for_spec(self, spec: OpSpec) -> tuple[str, Callable[..., torch.Tensor] | None]:
        """(library name, function) an override of `spec` is gated against.

        FlagGems without that op falls back to the generic kernel, and says so.
        """
        if self.name == "flaggems" and spec.name in self.ops:
            return "flaggems", self.ops[spec.name]
        return "generic", spec.generic

    def to_json(self) -> dict[str, Any]:
        """The report's `baseline` object."""
        return {"name": self.name, "version": self.version, "requested": self.requested,
                "ops": sorted(self.ops) if self.name == "flaggems" else None, "note": self.note}


def _generic_flaggems(module: Any, fn: Callable[..., Any]) -> Callable[..., Any]:
    """FlagGems' own function of `fn`'s name: the operator table already holds the vendor's or
    architecture folder's replacement (Hopper's `mm` on an H100), which is the candidate, not
    the op it replaces. `flag_gems.ops` and `flag_gems.fused` keep the generic ones."""
    name = getattr(fn, "__name__", "")
    for package in ("ops", "fused"):
        # typed, not a `type: ignore`, which one of the two mypy runs (with and without torch)
        # would report as unused
        generic: Callable[..., Any] | None = getattr(getattr(module, package, None), name, None)
        if callable(generic):
            return generic
    return fn


def flaggems_ops(module: Any) -> dict[str, Callable[..., torch.Tensor]]:
    """Generic op name -> FlagGems' generic function for it, wrapped to the spec's signature."""
    table: dict[str, Callable[..., Any]] = {}
    for item in getattr(module, "_FULL_CONFIG", ()):
        if len(item) > 2 and not item[2]():
            continue
        table.setdefault(item[0], _generic_flaggems(module, item[1]))
    ops = {}
    for name, (aten, adapt) in FLAGGEMS_OPS.items():
        fn = table.get(aten)
        if fn is not None:
            ops[name] = adapt(fn)
    return ops


def _import_flaggems() -> tuple[Any, str | None]:
    # FlagGems imports its own top-level `backend_utils`, the name vendor backends import ours
    # by: put back whatever was there, so backends loaded afterwards still get ours.
    before = sys.modules.get("backend_utils")
    try:
        return importlib.import_module("flag_gems"), None
    except Exception as exc:  # no GPU, wrong torch, missing dependency: all mean "not here"
        return None, f"{type(exc).__name__}: {exc}"
    finally:
        if before is None:
            sys.modules.pop("backend_utils", None)
        else:
            sys.modules["backend_utils"] = before


def resolve(requested: str) -> Baseline:
    """The baseline for `--baseline requested`; raises BaselineUnavailable for an explicit
    `flaggems` that does not import."""
    if requested not in CHOICES:
        raise ValueError(f"--baseline: one of {', '.join(CHOICES)}, got {requested!r}")
    generic = Baseline("generic", __version__, requested)
    if requested == "generic":
        return generic
    module, problem = _import_flaggems()
    if module is None:
        if requested == "flaggems":
            raise BaselineUnavailable(f"--baseline flaggems: flag_gems does not import ({problem})")
        generic.note = f"flag_gems not importable, using the generic ops ({problem})"
        return generic
    return Baseline("flaggems", str(getattr(module, "__version__", "unknown")), requested,
                    flaggems_ops(module))
