"""Bounded reading of the files a registry check needs: text, Python trees, string literals.

Every file is read at most once per run (a `Sources` lives for one `check_plugins` call) and
never past the size limit; the plugin's code is parsed with `ast`, never imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

from flagbot.hooks.limits import MAX_SOURCE_BYTES, TooLarge, read_limited
from flagbot.hooks.plugins.rules import Report


class Sources:
    """Texts and parsed modules by resolved path; problems are reported once per file."""

    def __init__(self, report: Report) -> None:
        self.report = report
        self.texts: dict[Path, str | None] = {}
        self.trees: dict[Path, ast.Module | None] = {}

    def text(self, path: Path, *, quiet: bool = False) -> str | None:
        """The file's text; None (reported unless `quiet`) when missing, too large or not UTF-8."""
        key = path.resolve()
        if key not in self.texts:
            try:
                self.texts[key] = read_limited(key, MAX_SOURCE_BYTES).decode("utf-8")
            except TooLarge as exc:
                self.texts[key] = None
                if not quiet:
                    self.report.add("plugin-file-too-large", path, 0, f"{exc}; its declarations "
                                    "are not checked")
            except (OSError, UnicodeDecodeError):
                self.texts[key] = None
        return self.texts[key]

    def module(self, path: Path, *, quiet: bool = False) -> ast.Module | None:
        """The file's syntax tree; None when unreadable or (reported) not valid Python."""
        key = path.resolve()
        if key not in self.trees:
            text = self.text(path, quiet=quiet)
            tree = None
            if text is not None:
                try:
                    tree = ast.parse(text, filename=str(path))
                except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
                    line = getattr(exc, "lineno", None) or 0
                    if not quiet:
                        self.report.add("plugin-source-syntax", path, line, f"not valid Python "
                                        f"({getattr(exc, 'msg', exc)}): importing it fails at run "
                                        "time, and its registrations are not checked; fix the "
                                        "syntax")
            self.trees[key] = tree
        return self.trees[key]


def literal_str(node: ast.AST | None) -> str | None:
    """The value of a string constant node, else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def call_name(call: ast.Call) -> str:
    """`f` for `f(...)` and `x.f(...)`."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def argument(call: ast.Call, name: str, position: int) -> ast.AST | None:
    """The node passed as keyword `name` or at `position`; None when not passed."""
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    if position < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args):
        return call.args[position]
    return None


def assigned_dict(tree: ast.AST, name: str) -> ast.Dict | None:
    """The first `name = {...}` / `name: T = {...}` anywhere in `tree`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets = [node.target]
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == name for t in targets) \
                and isinstance(node.value, ast.Dict):
            return node.value
    return None


def top_level_names(tree: ast.Module) -> tuple[set[str], bool]:
    """Names a module binds at top level (defs, classes, assignments, imports) and whether it
    has a `from x import *` or a module `__getattr__` (then any name may exist)."""
    names: set[str] = set()
    open_ended = False
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            open_ended |= node.name == "__getattr__"
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*":
                    open_ended = True
                else:
                    names.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for sub in ast.walk(target):
                    if isinstance(sub, ast.Name):
                        names.add(sub.id)
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            # guarded definitions (`try: from x import y except ImportError: y = None`)
            for field in ("body", "orelse", "finalbody"):
                stack.extend(getattr(node, field, []))
            for handler in getattr(node, "handlers", []):
                stack.extend(handler.body)
    return names, open_ended
