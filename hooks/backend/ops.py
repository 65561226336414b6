"""Operator rules: `ops/` and `fused/` packages (both forms), `__all__`, unused-op lists.

Current form: every function visible in `ops/__init__.py` replaces the generic FlagGems function
of the same Python name, and `CUSTOMIZED_UNUSED_OPS` is matched against `func.__name__`.
Documented form: `get_specific_ops()` lists (aten name, function, Autograd flag) and
`get_unused_ops()` names aten ops or functions (FlagGems' loader of that form matched both the
aten key and `func.__name__`).
"""

from __future__ import annotations

import ast
from pathlib import Path

from flagbot.hooks import aten_ops, experimental_ops
from flagbot.hooks.backend.pysrc import Module, literal_strings, returned_values
from flagbot.hooks.backend.scopes import assignments
from flagbot.hooks.backend.vendor import IDENT_RE, Vendor


def _import_target(v: Vendor, pkg: Path, level: int, module: str, name: str) -> str | None:
    """None if `from <level><module> import name` resolves inside the vendor, else why not."""
    src = v.sources
    mod_file = src.resolve(str(pkg), level, module, str(v.folder))
    if mod_file is None:
        return None  # absolute or outside the vendor folder: flag_gems.*, triton, torch
    dotted = "." * level + module
    if not src.is_file(mod_file):
        return f"imports {name} from {dotted}, but {v.rel(Path(mod_file))} does not exist"
    if src.defines(mod_file, name):
        return None
    sub = src.resolve(str(pkg), level, f"{module}.{name}" if module else name, str(v.folder))
    if sub is not None and src.is_file(sub):
        return None  # `from . import add` names the submodule ops/add.py
    return f"imports {name} from {dotted}, but {v.rel(Path(mod_file))} does not define it"


def check_imports(v: Vendor, pkg: Path, mod: Module) -> set[str]:
    """Check the package's relative imports; return the function names it makes visible."""
    init = pkg / "__init__.py"
    names: set[str] = set()
    for bound, b in mod.bindings.items():
        if b.kind == "def" or (b.kind == "import-name" and b.module is not None and b.module[0] > 0):
            names.add(bound)
    # Every import statement, not only the last binding of a name: arch branches
    # (`if arch == 300: ... else: ...`) import the same names from different modules.
    for b in mod.imports:
        if b.module is None or b.name is None or b.module[0] == 0 or b.guarded:
            continue
        level, module = b.module
        problem = _import_target(v, pkg, level, module, b.name)
        if problem:
            v.add("op-func-missing", init, b.line, f"{problem}; fix the import or add the function")
    for name, first, again in mod.repeated:
        v.add("op-duplicate", init, again, f"{name} is imported again (first at line {first}); "
              "the later import silently replaces the earlier one")
    return names


def check_all(v: Vendor, path: Path, mod: Module) -> list[str] | None:
    """Each `__all__` is a literal list of unique names bound where it runs; return them all.

    None when the module has no `__all__`. An `__all__` inside a branch (one per
    architecture) is checked against what that branch binds.
    """
    if "__all__" not in mod.bindings or mod.tree is None:
        return None
    exported: dict[str, None] = {}
    for node, visible in assignments(mod.tree, "__all__"):
        items = literal_strings(node.value)
        if items is None:
            v.add("not-static", path, node.lineno, "__all__ is not a literal list of strings; "
                  "its names were not checked")
            continue
        seen: dict[str, int] = {}
        for name, line in items:
            if name in seen:
                v.add("all-duplicate", path, line, f"{name!r} is listed twice in __all__ (first at "
                      f"line {seen[name]}); remove one")
            seen.setdefault(name, line)
            if name != "*" and name not in visible and "*" not in visible:
                v.add("all-undefined", path, line, f"__all__ names {name!r}, which this module "
                      "neither defines nor imports" + (" in this branch" if node.col_offset else "")
                      + "; `from ... import *` would fail")
        exported.update(dict.fromkeys(seen))
    return list(exported)


def check_package(v: Vendor, pkg: Path, skip: tuple[str, ...] = ()) -> set[str]:
    """Current form for `ops/`, `fused/` or `<arch>/ops/`: imports and `__all__`."""
    mod = v.module(pkg / "__init__.py")
    if mod is None:
        return set()
    names = check_imports(v, pkg, mod) - set(skip)
    exported = check_all(v, pkg / "__init__.py", mod)
    ctx = v.context
    if ctx is not None and v.applies_ops:
        for name in sorted(set(exported) if exported is not None else names):
            if name != "*" and name in mod.bindings and name not in ctx.generic_functions \
                    and name not in skip:
                v.add("op-replaces-nothing", pkg / "__init__.py", mod.bindings[name].line,
                      f"{name} matches no generic FlagGems function, so it replaces nothing; "
                      "name it after the generic function it specialises")
    return names


def _resolve_ref(v: Vendor, pkg: Path, mod: Module, expr: ast.expr) -> str | None:
    """None if the function expression (`f` or `module.f`) resolves, else why not."""
    if isinstance(expr, ast.Name):
        if expr.id in mod.bindings or "*" in mod.bindings:
            return None
        return f"{expr.id} is not defined or imported in {v.rel(pkg / '__init__.py')}"
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
        binding = mod.bindings.get(expr.value.id)
        if binding is None:
            return f"{expr.value.id} is not imported in {v.rel(pkg / '__init__.py')}"
        if binding.kind == "import-name" and binding.module and binding.name:
            level, module = binding.module
            sub = v.sources.resolve(str(pkg), level,
                                    f"{module}.{binding.name}" if module else binding.name,
                                    str(v.folder))
            if sub is not None and v.sources.is_file(sub):
                if not v.sources.defines(sub, expr.attr):
                    return f"{v.rel(Path(sub))} does not define {expr.attr}"
                return None
            owner = v.sources.resolve(str(pkg), level, module, str(v.folder))
            if module and owner is not None and v.sources.is_file(owner) \
                    and v.sources.defines(owner, binding.name):
                # `from .add import add` after `from . import add` rebinds the name to the
                # function, so `add.add` looks the attribute up on a function and fails.
                return (f"{expr.value.id} is the function imported at line {binding.line} "
                        f"(from {'.' * level}{module}), not the module; write {expr.value.id}")
        return None
    return "the function is not a name or module.name"


def _specific_entries(v: Vendor, path: Path, func: ast.AST) -> list[ast.Tuple]:
    """The entry tuples of every `return` (a conditional get_specific_ops has several)."""
    returns = returned_values(func)
    if not returns:
        v.add("specific-ops-shape", path, getattr(func, "lineno", 0), "get_specific_ops() "
              "returns nothing; return a tuple of (aten_name, function, Autograd.x) tuples")
    entries: list[ast.Tuple] = []
    for ret in returns:
        value = ret.value
        if isinstance(value, ast.Dict) and not value.keys:
            continue  # `return {}`: iterates as no entries, as `()` does
        if not isinstance(value, (ast.Tuple, ast.List)):
            v.add("specific-ops-shape", path, ret.lineno, "get_specific_ops() must return a "
                  "literal tuple of (aten_name, function, Autograd.x) tuples")
            continue
        for elt in value.elts:
            if isinstance(elt, ast.Tuple) and 2 <= len(elt.elts) <= 4 and isinstance(
                    elt.elts[0], ast.Constant) and isinstance(elt.elts[0].value, str):
                entries.append(elt)
            else:
                v.add("specific-ops-shape", path, elt.lineno, "entry is not (\"aten.name\", "
                      "function[, Autograd.enable|disable]) with a literal aten name")
    return entries


def check_documented(v: Vendor, pkg: Path, mod: Module) -> None:
    """`get_specific_ops()` / `get_unused_ops()` in ops/__init__.py (the documented form)."""
    path = pkg / "__init__.py"
    check_imports(v, pkg, mod)
    check_all(v, path, mod)
    seen: dict[str, int] = {}
    func_node = mod.bindings["get_specific_ops"].node
    for entry in _specific_entries(v, path, func_node) if func_node is not None else []:
        name = str(entry.elts[0].value)  # type: ignore[attr-defined]
        if name in seen:
            v.add("op-duplicate", path, entry.lineno, f"{name!r} is registered twice (first at "
                  f"line {seen[name]}); the later entry replaces the earlier")
        seen.setdefault(name, entry.lineno)
        if not aten_ops.is_aten_op(name):
            hint = ", ".join(aten_ops.suggest(name)) or "see torch.ops.aten"
            v.add("aten-name", path, entry.lineno, f"{name!r} is not an aten operator "
                  f"(name or name.overload); did you mean: {hint}")
        problem = _resolve_ref(v, pkg, mod, entry.elts[1])
        if problem:
            v.add("op-func-missing", path, entry.elts[1].lineno, f"{name}: {problem}")
        func = entry.elts[1]
        v.implemented.add(func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", ""))
        v.implemented_aten.add(name)
    unused = mod.bindings.get("get_unused_ops")
    if unused is not None and unused.node is not None:
        returns = returned_values(unused.node)
        if not returns:
            check_unused(v, path, None, unused.line, aten_allowed=True)
        for ret in returns:
            check_unused(v, path, ret.value, ret.lineno, aten_allowed=True)


def _registered_hint(v: Vendor, name: str) -> str:
    """"; did you mean 'ge_scalar' ..." when `name` spells an aten name `_FULL_CONFIG` registers."""
    found = v.context.registered_function(name) if v.context is not None else None
    if found is None:
        return ""
    return f"; did you mean {found[1]!r} (the function _FULL_CONFIG registers for aten {found[0]!r})?"


def check_unused(v: Vendor, path: Path, node: ast.AST | None, line: int, *, aten_allowed: bool,
                 implemented: set[str] | None = None) -> None:
    """Unused-op names: literal, matching something, and not also implemented here.

    `implemented`: the vendor functions that surely run where this list does (default: all).
    """
    items = literal_strings(node)
    if items is None:
        v.add("unused-literal", path, line, "the unused-op list must be a literal tuple of "
              "strings (it is read without importing the backend)")
        return
    ctx = v.context
    imported = experimental_ops.imported_names()  # operators flagbot's kernels import took in
    for name, at in items:
        is_aten = aten_allowed and aten_ops.is_aten_op(name, allow_base=True)
        if not IDENT_RE.match(name) and not is_aten:
            how = "an aten name or a function name" if aten_allowed else "a function __name__ " \
                "(FlagGems matches func.__name__, so aten overloads like 'add.Tensor' never match)"
            v.add("unused-unknown", path, at, f"{name!r} is not {how}{_registered_hint(v, name)}")
            continue
        known = name in v.implemented or is_aten or name in imported or \
            (ctx is not None and name in ctx.generic_functions)
        if ctx is not None and not known:
            # FlagGems matches func.__name__, so an aten name such as "_to_copy" silently
            # disables nothing; name the function _FULL_CONFIG registers for it.
            v.add("unused-unknown", path, at, f"{name!r} matches no generic FlagGems function "
                  f"(flag_gems/ops, fused) nor a vendor op: it disables nothing"
                  f"{_registered_hint(v, name) or '; check the spelling'}")
        if ctx is None and not known and not aten_ops.is_function_name(name):
            lower = f"; FlagGems function names are lower case ({name.lower()!r}?)" \
                if name != name.lower() else ""
            v.add("unused-not-aten", path, at, f"{name!r} is not named after an ATen operator as "
                  f"FlagGems names its functions (add, pow_tensor_scalar) nor a vendor op, so it "
                  f"may disable nothing{lower}; pass --flaggems DIR to check it against the "
                  "generic functions")
        if name in (v.implemented if implemented is None else implemented) or name in v.implemented_aten:
            v.add("unused-and-implemented", path, at, f"{name!r} is implemented by this vendor "
                  "and also listed unused, so the vendor's own kernel is dropped; remove one")
