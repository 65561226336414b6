"""What a FlagGems source tree tells the backend rules: generic ops, vendors enum, tune keys.

Found by walking up from the backend root (FlagGems keeps vendors in
`src/flag_gems/runtime/backend/`) or given as a path (`--flaggems`, config
`flaggems.package_root`). Read with regular expressions over text on purpose: the generic
tree has hundreds of files and the whole check must stay under a second.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from flagbot.hooks.limits import MAX_SOURCE_BYTES, read_limited

# Where each piece lives, relative to the `flag_gems` package directory (the package root is
# configurable: --flaggems or flaggems.package_root; the relative layout is FlagGems' own and
# stable since 2025-01).
LAYOUT = {
    "registry": "__init__.py",
    "ops": "ops",
    "fused": "fused",
    "vendors": "runtime/common.py",
}
# Before 2025-12-05 the vendors enum lived in `runtime/commom_utils.py` (sic), and that loader
# applied neither the ops nor the unused-op list of the NVIDIA folder (`runtime/__init__.py`
# `replace_customized_ops`, `runtime/register.py` `get_vendor_unused_op`).
OLDER_VENDORS = "runtime/commom_utils.py"
# runtime/common.py: vendor -> torch attribute; the device finder tries these (and NVIDIA by the
# CUDA device's name) before it runs any vendor's device_query_cmd.
TORCH_ATTR_NAME = "_VENDOR_TORCH_ATTR"
# The same table as FlagGems ed2508bc ships it, for a check without a FlagGems tree; NVIDIA is
# recognised by `torch.cuda.get_device_properties(0).name`.
TORCH_DETECTED = frozenset({"ascend", "cambricon", "enflame", "hygon", "iluvatar", "mthreads",
                            "sunrise", "tsingmicro"})
ALWAYS_TORCH_DETECTED = frozenset({"nvidia"})


def vendors_file(package: Path) -> Path | None:
    """The file holding the vendors enum: the current layout's, else the older one's."""
    for rel in (LAYOUT["vendors"], OLDER_VENDORS):
        if (package / rel).is_file():
            return package / rel
    return None

# Patterns open with a literal character (newline, quote) so the regex engine can skip ahead:
# a leading `^` under re.M or a look-behind tries every position of 6 MB of generic sources.
_DEF = re.compile(r"\n[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)")
_FULL_ENTRY = re.compile(r"\(\s*[\"']([\w.]+)[\"']\s*,\s*([\w.]+)")
# An identifier in quotes ("add"), or the constant head of a template (f"mha_block_{n}",
# "mha_block_{}".format(n)): group 2 is the closing quote or the brace.
_LITERAL = re.compile(r"[\"']([A-Za-z_]\w*)([\"'{])")


@dataclass
class FlagGemsContext:
    """The generic registry and vendors list; `package` is the flag_gems directory."""

    package: Path
    full_config: dict[str, str] = field(default_factory=dict)  # aten name -> function name
    generic_functions: frozenset[str] = frozenset()
    vendors: frozenset[str] | None = None  # None: common.py missing or unreadable
    vendors_path: Path | None = None  # runtime/common.py, or commom_utils.py in older trees
    torch_detected: frozenset[str] | None = None  # keys of _VENDOR_TORCH_ATTR; None: not found
    strings: frozenset[str] = frozenset()  # every identifier-like string literal in the tree
    prefixes: tuple[str, ...] = ()  # constant heads of f-strings (f"mha_block_{n}")

    def registered_function(self, name: str) -> tuple[str, str] | None:
        """(aten name, function) of the `_FULL_CONFIG` entry `name` spells: the aten name itself
        (`__and__.Tensor`) or flattened like a function name (`greater_equal_Scalar`)."""
        if name in self.full_config:
            return name, self.full_config[name]
        flat = name.replace(".", "_").lower()
        for aten, func in self.full_config.items():
            if aten.replace(".", "_").lower() == flat:
                return aten, func
        return None

    @property
    def older_layout(self) -> bool:
        """The loader of trees before 2025-12-05 (see OLDER_VENDORS)."""
        return self.vendors_path is not None and self.vendors_path.name == Path(OLDER_VENDORS).name


def literal_names(text: str, strings: set[str], prefixes: set[str]) -> None:
    """Add the identifier-like string literals of `text` to `strings`, template heads to `prefixes`."""
    for name, closer in _LITERAL.findall(text):
        (prefixes if closer == "{" else strings).add(name)


def find_package(root: Path, top: Path | None = None) -> Path | None:
    """The flag_gems package dir above `root` (it has the vendors enum file), if any, searched
    no higher than `top` (the repository: nothing outside it is read)."""
    for parent in [root, *root.parents]:
        if top is not None and not parent.is_relative_to(top):
            return None
        if vendors_file(parent) is not None and (parent / LAYOUT["registry"]).is_file():
            return parent
    return None


def _read(path: Path) -> str:
    """The file's text; "" when unreadable or over the source size limit (context is a hint)."""
    try:
        return read_limited(path, MAX_SOURCE_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return ""


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        return None


def read_vendors(path: Path) -> frozenset[str] | None:
    """Lower-cased member names of `class vendors(Enum)` (what get_all_vendors() returns)."""
    tree = _parse(_read(path))
    if tree is None:
        return None
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "vendors":
            names = {
                target.id.lower()
                for stmt in node.body if isinstance(stmt, ast.Assign)
                for target in stmt.targets if isinstance(target, ast.Name)
            }
            return frozenset(names)
    return None


def read_torch_detected(path: Path) -> frozenset[str] | None:
    """Keys of the `_VENDOR_TORCH_ATTR` dict literal: vendors FlagGems detects through torch."""
    tree = _parse(_read(path))
    for node in tree.body if tree is not None else []:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict) and any(
                isinstance(t, ast.Name) and t.id == TORCH_ATTR_NAME for t in node.targets):
            return frozenset(k.value for k in node.value.keys
                             if isinstance(k, ast.Constant) and isinstance(k.value, str))
    return None


def exported_names(text: str) -> set[str]:
    """Names a package `__init__.py` binds or lists: imports, assignments, defs, `__all__`.

    `flag_gems/__init__.py` does `from flag_gems.ops import *`, so these (not only the `def`s
    of the op files) are the generic functions a vendor op of the same name replaces.
    """
    tree = _parse(text)
    if tree is None:
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names if a.name != "*")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets) \
                    and isinstance(node.value, (ast.List, ast.Tuple)):
                names.update(e.value for e in node.value.elts
                             if isinstance(e, ast.Constant) and isinstance(e.value, str))
    names.discard("__all__")
    return names


def load_context(package: Path, backend_root: Path | None = None) -> FlagGemsContext:
    """Scan the FlagGems package once; vendor folders under `backend_root` are left out."""
    ctx = FlagGemsContext(package=package)
    registry = _read(package / LAYOUT["registry"])
    ctx.full_config = {aten: func.rsplit(".", 1)[-1] for aten, func in _FULL_ENTRY.findall(registry)}
    functions: set[str] = set(ctx.full_config.values())
    strings: set[str] = set()
    prefixes: set[str] = set()
    skip = str(backend_root.resolve()) if backend_root is not None else None
    generic = {str(package / LAYOUT["ops"]), str(package / LAYOUT["fused"])}
    for directory, subdirs, files in os.walk(package):
        # vendor folders are checked as vendors, not read as generic code
        subdirs[:] = [d for d in subdirs if d != "__pycache__" and os.path.join(directory, d) != skip]
        in_generic = any(directory == g or directory.startswith(g + os.sep) for g in generic)
        for name in files:
            if not name.endswith(".py"):
                continue
            text = _read(Path(directory, name))
            literal_names(text, strings, prefixes)
            if in_generic:
                functions.update(_DEF.findall("\n" + text))
    for part in ("ops", "fused"):
        functions.update(exported_names(_read(package / LAYOUT[part] / "__init__.py")))
    ctx.generic_functions = frozenset(functions)
    ctx.strings = frozenset(strings)
    ctx.prefixes = tuple(sorted(prefixes))
    ctx.vendors_path = vendors_file(package)
    ctx.vendors = read_vendors(ctx.vendors_path) if ctx.vendors_path is not None else None
    ctx.torch_detected = read_torch_detected(ctx.vendors_path) if ctx.vendors_path else None
    return ctx
