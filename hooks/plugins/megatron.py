"""Megatron-LM-FL: `megatron/plugin/override_registry.py` against `@overridable` and platforms.

`register(target, impl, vendor="default")` files `impl` under the key made of the last two
dotted segments of `target`; `@overridable` looks its own key up at first call (a class:
`<module>.<Class>`; a function whose first parameter is `self`: `<Class>.<method>`; any other
function: `<module>.<function>`). The vendor chosen at run time is `MG_FL_PREFER` or the
platform's `device_name()`, then `default`. `impl` is imported lazily and an import failure
is only logged at debug level: every mistake here silently runs the original CUDA code.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from flagbot.hooks.limits import MAX_SOURCE_BYTES, read_limited
from flagbot.hooks.plugins.dispatch_config import close
from flagbot.hooks.plugins.rules import Report
from flagbot.hooks.plugins.sources import Sources, argument, call_name, literal_str, top_level_names

REGISTRY = Path("megatron/plugin/override_registry.py")
PLATFORMS = Path("megatron/plugin/platform")
DEFAULT_VENDOR = "default"
# `@overridable` or `@<module>.overridable`: files without it are not parsed
MARKER = re.compile(rb"@[\w.]*overridable")


@dataclass(frozen=True)
class Registration:
    """One register() call: its literal arguments (None: not a literal) and their lines."""

    target: str | None
    impl: str | None
    vendor: str | None
    line: int
    lines: dict[str, int]

    def at(self, name: str) -> int:
        return self.lines.get(name, self.line)


def module_basename(root: Path, path: Path) -> str:
    """The last segment of the module a file defines (a package's `__init__.py`: the package)."""
    rel = path.relative_to(root).with_suffix("")
    return rel.parent.name if rel.name == "__init__" else rel.name


def decorated(node: ast.AST) -> bool:
    decorators = getattr(node, "decorator_list", [])
    return any((isinstance(d, ast.Name) and d.id == "overridable")
               or (isinstance(d, ast.Attribute) and d.attr == "overridable") for d in decorators)


def overridable_keys(sources: Sources, root: Path) -> set[str]:
    """Every key an `@overridable` under `megatron/` looks up (files without the word are
    skipped unparsed: a few of the tree's hundreds of modules carry the decorator)."""
    keys: set[str] = set()
    for path in sorted((root / "megatron").rglob("*.py")):
        if "tests" in path.relative_to(root).parts:
            continue  # the mechanism's own tests decorate made-up functions
        try:
            if not MARKER.search(read_limited(path, MAX_SOURCE_BYTES)):
                continue
        except OSError:  # unreadable or over the limit (TooLarge): it is not a source here
            continue
        tree = sources.module(path, quiet=True)
        if tree is not None:
            collect_keys(tree, module_basename(root, path), None, keys)
    return keys


def statements(node: ast.AST) -> list[ast.stmt]:
    """The statements directly inside `node` (bodies, else/finally branches, handlers): a
    decorated definition is always a statement, so expressions are never walked."""
    out: list[ast.stmt] = []
    for name in ("body", "orelse", "finalbody"):
        value = getattr(node, name, None)
        if isinstance(value, list):
            out += [s for s in value if isinstance(s, ast.stmt)]
    for handler in getattr(node, "handlers", []):
        out += handler.body
    for case in getattr(node, "cases", []):
        out += case.body
    return out


def collect_keys(node: ast.AST, module: str, owner: str | None, keys: set[str]) -> None:
    for child in statements(node):
        if isinstance(child, ast.ClassDef):
            if decorated(child):
                keys.add(f"{module}.{child.name}")
            collect_keys(child, module, child.name, keys)
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if decorated(child):
                params = child.args.posonlyargs + child.args.args
                is_method = bool(params) and params[0].arg == "self" and owner is not None
                keys.add(f"{owner}.{child.name}" if is_method else f"{module}.{child.name}")
            collect_keys(child, module, None, keys)
        else:
            collect_keys(child, module, owner, keys)


def device_names(sources: Sources, root: Path) -> set[str]:
    """String literals `device_name()` returns in `megatron/plugin/platform/platform_*.py`."""
    names: set[str] = set()
    for path in sorted((root / PLATFORMS).glob("platform_*.py")):
        tree = sources.module(path, quiet=True)
        classes = [c for c in tree.body if isinstance(c, ast.ClassDef)] if tree is not None else []
        for cls in classes:
            for fn in cls.body:
                if isinstance(fn, ast.FunctionDef) and fn.name == "device_name":
                    for sub in ast.walk(fn):
                        value = literal_str(sub.value) if isinstance(sub, ast.Return) else None
                        if value:
                            names.add(value)
    return names


def registrations(tree: ast.Module) -> list[Registration]:
    """The `register(...)` calls of the registry module."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and call_name(node) == "register":
            nodes = {name: argument(node, name, i) for i, name in enumerate(("target", "impl",
                                                                              "vendor"))}
            vendor = DEFAULT_VENDOR if nodes["vendor"] is None else literal_str(nodes["vendor"])
            lines = {name: getattr(n, "lineno", node.lineno) for name, n in nodes.items()
                     if n is not None}
            out.append(Registration(literal_str(nodes["target"]), literal_str(nodes["impl"]),
                                    vendor, node.lineno, lines))
    return sorted(out, key=lambda r: r.line)


def impl_problem(sources: Sources, root: Path, impl: str) -> str | None:
    """Why `impl` (`pkg.module.attr`) cannot be imported from the tree, or None."""
    module, _, attr = impl.rpartition(".")
    if not module:
        return f"{impl!r} is not a dotted module.attribute path, and the plugin rejects it"
    base = root.joinpath(*module.split("."))
    path = next((p for p in (base.with_suffix(".py"), base / "__init__.py") if p.is_file()), None)
    if path is None:
        return (f"module {module} does not exist (no {base.relative_to(root).as_posix()}.py"
                " or package), so the import fails")
    text = sources.text(path)
    if text is None:
        return None  # reported as too large
    if re.search(rf"^(?:def|class|async def) {re.escape(attr)}\b|^{re.escape(attr)}\s*[:=]",
                 text, re.MULTILINE):
        return None  # defined at top level: no need to parse the module
    tree = sources.module(path)
    if tree is None:
        return None  # reported as a syntax error
    names, open_ended = top_level_names(tree)
    if attr in names or open_ended:
        return None
    return f"module {module} has no top-level {attr!r}{close(attr, names)}"


def check_registry(report: Report, sources: Sources, root: Path) -> None:
    """All findings of `<root>/megatron/plugin/override_registry.py`."""
    path = root / REGISTRY
    tree = sources.module(path)
    if tree is None:
        return
    keys = overridable_keys(sources, root)
    vendors = device_names(sources, root)
    seen: dict[tuple[str, str], int] = {}
    for reg in registrations(tree):
        dynamic = [name for name, value in (("target", reg.target), ("impl", reg.impl),
                                            ("vendor", reg.vendor)) if value is None]
        if dynamic:
            report.add("plugin-register-dynamic", path, reg.at(dynamic[0]), f"register(): "
                       f"{', '.join(dynamic)} not a string literal, so this override cannot be "
                       "checked statically; write the literal string")
        vendor = reg.vendor.lower() if reg.vendor is not None else None
        if reg.target is not None:
            key = ".".join(reg.target.rsplit(".", 2)[-2:])
            if key not in keys:
                report.add("plugin-target-not-overridable", path, reg.at("target"), f"target "
                           f"{reg.target!r}: no @overridable function, method or class has the "
                           f"key {key!r} (its last two segments), so the override is never "
                           f"consulted and the original code runs{close(key, keys)}; fix the "
                           "target or decorate the original with @overridable")
            if vendor is not None:
                if (key, vendor) in seen:
                    report.add("plugin-duplicate-register", path, reg.at("target"), f"{key} is registered "
                               f"again for vendor {vendor!r} (first at line {seen[key, vendor]}): "
                               "this later impl silently replaces the first; keep one")
                seen.setdefault((key, vendor), reg.at("target"))
        if reg.impl is not None:
            problem = impl_problem(sources, root, reg.impl)
            if problem:
                report.add("plugin-impl-not-found", path, reg.at("impl"), f"impl: {problem}; the plugin "
                           "logs it at debug level and silently runs the original code; fix the "
                           "path")
        if vendor is not None and vendor != DEFAULT_VENDOR and vendor not in vendors:
            report.add("plugin-unknown-vendor", path, reg.at("vendor"), f"vendor {reg.vendor!r} is no "
                       f"platform's device_name() ({', '.join(sorted(vendors)) or 'none found'}), "
                       f"so the override is used only under MG_FL_PREFER={vendor}"
                       f"{close(vendor, vendors)}; use the device name or 'default'")
