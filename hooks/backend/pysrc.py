"""Reading Python sources without importing them: cached text and ASTs, top-level bindings.

Vendor code imports a device stack (torch_npu, triton forks) that is not installed where the
checker runs, so everything here is `ast` and regular expressions over text, never `import`.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from flagbot.hooks.limits import MAX_SOURCE_BYTES, TooLarge, read_limited

# Names bound at column 0 by `def`, `class` or `NAME =` / `NAME: T =`. A fast first answer to
# "does this module define X": 16 vendors x 450 op files must check in well under a second.
_TOP_DEF = re.compile(r"^(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)|^(\w+)[ \t]*(?::[^\n=]*)?=(?!=)", re.M)


@dataclass
class Binding:
    """How a module-level name is bound: `def`, `class`, `assign`, or an import."""

    kind: str  # def | class | assign | import-name | import-module | star
    line: int
    module: tuple[int, str] | None = None  # (relative level, dotted module) for imports
    name: str | None = None  # the imported name (`from m import name as alias`)
    node: ast.AST | None = None
    guarded: bool = False  # inside `try: ... except ImportError`: allowed to be missing


@dataclass
class Module:
    """One parsed file: its text, AST (None on a syntax error) and top-level bindings."""

    path: Path
    text: str
    tree: ast.Module | None
    error: tuple[int, str] | None = None
    error_rule: str = "python-syntax"  # or file-too-large: the file was not read
    bindings: dict[str, Binding] = field(default_factory=dict)
    repeated: list[tuple[str, int, int]] = field(default_factory=list)  # (name, first, again)
    imports: list[Binding] = field(default_factory=list)  # every `from m import n`, in order


def _submodule_then_member(first: Binding, again: Binding, name: str) -> bool:
    """`from . import add` then `from .add import add`: the usual way to expose a function."""
    if first.kind != "import-name" or first.module is None or again.module is None:
        return False
    level, package = first.module
    inner = f"{package}.{name}" if package else name
    return first.name == name and again.name == name and again.module == (level, inner)


def _bind(mod: Module, name: str, binding: Binding, track: bool) -> None:
    first = mod.bindings.get(name)
    if track and first is not None and first.kind.startswith("import") \
            and not _submodule_then_member(first, binding, name):
        mod.repeated.append((name, first.line, binding.line))
    mod.bindings[name] = binding


_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def _catches_import_error(node: ast.Try) -> bool:
    for handler in node.handlers:
        kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        if any(k is None or (isinstance(k, ast.Name) and k.id in _IMPORT_ERRORS) for k in kinds):
            return True
    return False


def _collect(mod: Module, body: list[ast.stmt], guarded: bool = False) -> None:
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _bind(mod, node.name, Binding("def", node.lineno, node=node), False)
        elif isinstance(node, ast.ClassDef):
            _bind(mod, node.name, Binding("class", node.lineno, node=node), False)
        elif isinstance(node, ast.ImportFrom):
            src = (node.level, node.module or "")
            for alias in node.names:
                if alias.name == "*":
                    mod.bindings.setdefault("*", Binding("star", node.lineno, module=src))
                    continue
                b = Binding("import-name", node.lineno, module=src, name=alias.name, guarded=guarded)
                mod.imports.append(b)
                _bind(mod, alias.asname or alias.name, b, True)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                _bind(mod, bound, Binding("import-module", node.lineno, module=(0, alias.name)), False)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for sub in ast.walk(target):
                    if isinstance(sub, ast.Name):
                        _bind(mod, sub.id, Binding("assign", node.lineno, node=node), False)
        elif isinstance(node, ast.If):
            # Conditional definitions still bind; `if arch == 300: from .a import f` /
            # `else: from .b import f` are alternatives, not a second import of f.
            _alternatives(mod, [[(node.body, guarded)], [(node.orelse, guarded)]])
        elif isinstance(node, ast.Try):
            # try/except ImportError fallbacks are alternatives too, and the tried import may
            # be missing on purpose; `else` follows the body, `finally` follows everything.
            tried = [(node.body, guarded or _catches_import_error(node)), (node.orelse, guarded)]
            _alternatives(mod, [tried] + [[(h.body, guarded)] for h in node.handlers])
            _collect(mod, node.finalbody, guarded)


def _alternatives(mod: Module, branches: list[list[tuple[list[ast.stmt], bool]]]) -> None:
    """Collect branches that never run together, each against the bindings before them.

    A branch is a sequence of (statements, guarded) segments run one after the other.
    """
    before = dict(mod.bindings)
    merged: dict[str, Binding] = {}
    for branch in branches:
        mod.bindings = dict(before)
        for stmts, guarded in branch:
            _collect(mod, stmts, guarded)
        merged.update(mod.bindings)
    mod.bindings = merged


def parse_failure(exc: BaseException) -> str:
    """Why a source that is not a SyntaxError still does not parse."""
    if isinstance(exc, RecursionError):
        return "nested too deeply for Python's parser (RecursionError)"
    if isinstance(exc, MemoryError):
        return "too large for Python's parser (MemoryError)"
    return str(exc)


class Sources:
    """A per-run cache of directory listings, files read and parsed (keyed by path string).

    Plain strings and os calls on purpose: pathlib objects cost more than the checks themselves
    when 16 vendors import 450 op modules each.
    """

    def __init__(self) -> None:
        self._text: dict[str, str | None] = {}
        self._mods: dict[str, Module] = {}
        self._defs: dict[str, frozenset[str]] = {}
        self._dirs: dict[str, dict[str, bool]] = {}
        self.oversized: dict[str, TooLarge] = {}  # files over MAX_SOURCE_BYTES, read as ""

    def listing(self, directory: str) -> dict[str, bool]:
        """name -> is_dir for the entries of `directory` (empty if it does not exist)."""
        entries = self._dirs.get(directory)
        if entries is None:
            try:
                with os.scandir(directory) as it:
                    entries = {e.name: e.is_dir() for e in it}
            except OSError:
                entries = {}
            self._dirs[directory] = entries
        return entries

    def is_file(self, path: str) -> bool:
        directory, name = os.path.split(path)
        return self.listing(directory).get(name) is False

    def text(self, path: Path | str) -> str | None:
        """The file's text (newlines made `\\n`); None when it cannot be read, "" when it is
        over the size limit (listed in `oversized`)."""
        key = str(path)
        if key not in self._text:
            try:
                raw = read_limited(key, MAX_SOURCE_BYTES).decode("utf-8", errors="replace")
                self._text[key] = raw.replace("\r\n", "\n").replace("\r", "\n")
            except TooLarge as exc:
                self.oversized[key] = exc
                self._text[key] = ""
            except OSError:
                self._text[key] = None
        return self._text[key]

    def module(self, path: Path | str) -> Module | None:
        """The parsed module at `path`, or None if the file does not exist."""
        key = str(path)
        if key in self._mods:
            return self._mods[key]
        text = self.text(key)
        if text is None:
            return None
        if key in self.oversized:
            self._mods[key] = Module(Path(key), text, None, error=(0, str(self.oversized[key])),
                                     error_rule="file-too-large")
            return self._mods[key]
        try:
            tree = ast.parse(text, filename=key)
        except SyntaxError as exc:
            mod = Module(Path(key), text, None, error=(exc.lineno or 1, exc.msg))
        except (RecursionError, MemoryError, ValueError) as exc:
            # nesting past the parser's limits, or a null byte: Python cannot load it either
            mod = Module(Path(key), text, None, error=(1, parse_failure(exc)))
        else:
            mod = Module(Path(key), text, tree)
            _collect(mod, tree.body)
        self._mods[key] = mod
        return mod

    def defines(self, path: Path | str, name: str) -> bool:
        """Whether the module at `path` binds `name` at top level (a star import counts)."""
        key = str(path)
        text = self.text(key) or ""
        head = f"def {name}("
        if text.startswith(head) or f"\n{head}" in text:
            return True  # the common case, answered without a regex or a parse
        if key not in self._defs:
            self._defs[key] = frozenset(a or b for a, b in _TOP_DEF.findall(text))
        if name in self._defs[key]:
            return True
        mod = self.module(key)
        if mod is None or mod.tree is None:
            return mod is not None  # a syntax error is reported on its own; do not pile on
        return name in mod.bindings or "*" in mod.bindings

    def resolve(self, package_dir: str, level: int, dotted: str, top: str) -> str | None:
        """The file a relative import from `package_dir/__init__.py` names, inside `top`.

        None when it is absolute or leaves `top` (flag_gems.*, triton): not ours to check.
        A missing module gives the `.py` path it would have, for the caller to report.
        """
        if level == 0:
            return None
        base = package_dir
        for _ in range(level - 1):
            base = os.path.dirname(base)
        if base != top and not base.startswith(top + os.sep):
            return None
        parts = [p for p in dotted.split(".") if p]
        target = os.path.join(base, *parts) if parts else base
        if parts and self.is_file(target + ".py"):
            return target + ".py"
        init = os.path.join(target, "__init__.py")
        if self.is_file(init):
            return init
        return target + ".py" if parts else init


def literal_strings(node: ast.AST | None) -> list[tuple[str, int]] | None:
    """A tuple/list of string constants as (value, line), or None if it is anything else."""
    if not isinstance(node, (ast.Tuple, ast.List)):
        return None
    out: list[tuple[str, int]] = []
    for elt in node.elts:
        if not (isinstance(elt, ast.Constant) and isinstance(elt.value, str)):
            return None
        out.append((elt.value, elt.lineno))
    return out


def assigned_value(mod: Module, name: str) -> ast.expr | None:
    """The value of the last top-level `name = value` (or `name: T = value`)."""
    binding = mod.bindings.get(name)
    if binding is None or binding.kind != "assign" or binding.node is None:
        return None
    node = binding.node
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        return node.value
    return None


def returned_values(func: ast.AST) -> list[ast.Return]:
    """Every `return` of the function itself (not of nested defs), in source order."""
    found: list[ast.Return] = []
    stack = list(reversed(getattr(func, "body", [])))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            found.append(node)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(reversed([c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt)]))
            for handler in getattr(node, "handlers", []):
                stack.extend(reversed(handler.body))
    return sorted(found, key=lambda r: r.lineno)
