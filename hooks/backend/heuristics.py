"""`HEURISTICS_CONFIGS`: a dict of op keys to dicts of Triton heuristics callables."""

from __future__ import annotations

import ast
from pathlib import Path

from flagbot.hooks.backend.pysrc import Module, assigned_value
from flagbot.hooks.backend.vendor import Vendor
from flagbot.kernels.flaggems_layout import HEURISTICS_NAME as NAME


def _callable_problem(mod: Module, value: ast.expr) -> str | None:
    """None if `value` is (statically) a callable: lambda, def, import, call result, attribute."""
    if isinstance(value, (ast.Lambda, ast.Attribute, ast.Call)):
        return None
    if isinstance(value, ast.Name):
        binding = mod.bindings.get(value.id)
        if binding is None:
            return None if "*" in mod.bindings else f"{value.id} is not defined in this module"
        if binding.kind == "assign":
            inner = assigned_value(mod, value.id)
            if isinstance(inner, (ast.Constant, ast.Dict, ast.List, ast.Tuple, ast.Set)):
                return f"{value.id} is a constant, not a callable"
        return None
    if isinstance(value, ast.Constant):
        return f"{value.value!r} is a constant; Triton calls each value with the kernel " \
               f"arguments, so write `lambda args: {value.value!r}`"
    return "the value is not a callable (lambda or function name)"


def _keys(v: Vendor, path: Path, node: ast.Dict, what: str) -> list[tuple[str, ast.expr]]:
    out: list[tuple[str, ast.expr]] = []
    seen: dict[str, int] = {}
    for key, value in zip(node.keys, node.values, strict=False):
        if key is None:
            continue  # `**other`: merged at run time, not checkable here
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            v.add("heuristics-shape", path, value.lineno, f"{what} keys must be string literals")
            continue
        if key.value in seen:
            v.add("heuristics-duplicate-key", path, key.lineno, f"{what} key {key.value!r} "
                  f"appears twice (first at line {seen[key.value]}); Python keeps only the last")
        seen.setdefault(key.value, key.lineno)
        out.append((key.value, value))
    return out


def check_heuristics(v: Vendor, path: Path, *, required: bool = True) -> set[str]:
    """Check the dict in `path`; return its op keys (empty if unreadable)."""
    mod = v.module(path)
    if mod is None:
        return set()
    binding = mod.bindings.get(NAME)
    if binding is None:
        if required:
            v.add("heuristics-shape", path, 0, f"{NAME} is not defined; FlagGems reads "
                  f"{NAME} from this module (an empty dict is fine)")
        return set()
    node = assigned_value(mod, NAME)
    if not isinstance(node, ast.Dict):
        if binding.kind == "assign" and isinstance(node, (ast.Constant, ast.List, ast.Tuple)):
            v.add("heuristics-shape", path, binding.line, f"{NAME} must be a dict")
        else:
            v.add("not-static", path, binding.line, f"{NAME} is not a dict literal; not checked")
        return set()
    keys: set[str] = set()
    for op, inner in _keys(v, path, node, NAME):
        keys.add(op)
        if not isinstance(inner, ast.Dict):
            v.add("heuristics-shape", path, inner.lineno, f"{NAME}[{op!r}] must be a dict of "
                  "parameter name -> callable")
            continue
        for param, value in _keys(v, path, inner, f"{NAME}[{op!r}]"):
            problem = _callable_problem(mod, value)
            if problem:
                v.add("heuristics-shape", path, value.lineno, f"{NAME}[{op!r}][{param!r}]: {problem}")
    return keys
