"""FlagGems' operator table, read without importing FlagGems: function name -> aten names.

FlagGems registers a vendor's function by its Python name: `flag_gems/__init__.py` holds
`_FULL_CONFIG`, a literal tuple of `(aten name, function[, condition])`, and a vendor function
replaces the generic function of the same name before that table is built. So the aten names a
vendor function lands on are the table's entries that use its name. The table is read with
`ast` from the FlagGems tree the backend belongs to; without one, BUNDLED (the entries of
FlagGems 5.0.2 for the operators the harness has specs for) stands in.
"""

from __future__ import annotations

import ast
from pathlib import Path

TABLE_NAME = "_FULL_CONFIG"

# function name -> aten names, from flag_gems 5.0.2 `_FULL_CONFIG` (only operators with a
# spec in kernels/registry.py, plus the in-place and out variants next to them).
BUNDLED: dict[str, tuple[str, ...]] = {
    "add": ("add.Tensor",), "add_": ("add_.Tensor",),
    "sub": ("sub.Tensor",), "sub_": ("sub_.Tensor",),
    "mul": ("mul.Tensor",), "mul_": ("mul_.Tensor",),
    "true_divide": ("div.Tensor", "div.Scalar", "divide.Tensor", "divide.Scalar"),
    "true_divide_": ("div_.Tensor", "div_.Scalar", "divide_.Tensor", "divide_.Scalar"),
    "sqrt": ("sqrt",), "sqrt_": ("sqrt_",), "rsqrt": ("rsqrt",), "rsqrt_": ("rsqrt_",),
    "exp": ("exp",), "exp_": ("exp_",),
    "fill_scalar": ("fill.Scalar",), "fill_scalar_": ("fill_.Scalar",),
    "fill_scalar_out": ("fill.Scalar_out",), "fill_tensor": ("fill.Tensor",),
    "fill_tensor_": ("fill_.Tensor",), "fill_tensor_out": ("fill.Tensor_out",),
    "gelu": ("gelu",), "gelu_": ("gelu_",), "silu": ("silu",), "silu_": ("silu_",),
    "softmax": ("_softmax",), "log_softmax": ("_log_softmax",),
    "layer_norm": ("native_layer_norm",), "rms_norm": ("rms_norm",),
    "sum": ("sum",), "sum_dim": ("sum.dim_IntList",), "mean": ("mean",),
    "mean_dim": ("mean.dim",), "max": ("max",), "max_dim": ("max.dim",),
    "argmax": ("argmax",), "cumsum": ("cumsum",), "cumsum_out": ("cumsum.out",),
    "embedding": ("embedding",), "index_select": ("index_select",), "cat": ("cat",),
    "mm": ("mm",), "mm_out": ("mm.out",), "addmm": ("addmm",), "addmm_out": ("addmm.out",),
    "bmm": ("bmm",), "bmm_out": ("bmm.out",),
}


def package_of(backend: Path) -> Path | None:
    """The `flag_gems` package folder a `runtime/backend/_<vendor>` folder sits in, if any."""
    parent = backend.parent
    if parent.name == "backend" and parent.parent.name == "runtime":
        package = parent.parent.parent
        if (package / "__init__.py").is_file():
            return package
    return None


def package_from_option(path: Path) -> Path | None:
    """`--flaggems PATH`: a checkout (`src/flag_gems`), a package folder or its parent."""
    for candidate in (path, path / "flag_gems", path / "src" / "flag_gems"):
        if candidate.name == "flag_gems" and (candidate / "__init__.py").is_file():
            return candidate
    return None


def read_table(init: Path) -> dict[str, tuple[str, ...]]:
    """function name -> aten names from the `_FULL_CONFIG` literal of `init`; {} if absent."""
    try:
        tree = ast.parse(init.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return {}
    table: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign) or not isinstance(node.value, (ast.Tuple, ast.List)):
            continue
        if not any(isinstance(t, ast.Name) and t.id == TABLE_NAME for t in node.targets):
            continue
        for item in node.value.elts:
            if not isinstance(item, ast.Tuple) or len(item.elts) < 2:
                continue
            aten, func = item.elts[0], item.elts[1]
            if isinstance(aten, ast.Constant) and isinstance(aten.value, str) and \
                    isinstance(func, ast.Name):
                table.setdefault(func.id, []).append(aten.value)
    return {name: tuple(atens) for name, atens in table.items()}


def function_table(package: Path | None) -> tuple[dict[str, tuple[str, ...]], str]:
    """(function name -> aten names, where the table came from)."""
    if package is not None:
        table = read_table(package / "__init__.py")
        if table:
            return table, f"{package / '__init__.py'} {TABLE_NAME}"
    return dict(BUNDLED), "flagbot's copy of FlagGems 5.0.2's table (no FlagGems tree given)"
