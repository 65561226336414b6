"""Every assignment of a module-level name, with the names visible where it runs.

Vendor packages assign `__all__` and `CUSTOMIZED_UNUSED_OPS` once per architecture
(`if arch_version == 300: ... elif ...:`); FlagGems runs one branch, so each assignment must hold
on its own, against the names its own branch binds, not those of a branch that never runs with it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

Assignment = ast.Assign | ast.AnnAssign


def _direct(stmts: list[ast.stmt]) -> set[str]:
    """Names the statements themselves bind (not those inside their nested blocks)."""
    names: set[str] = set()
    for node in stmts:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names)  # "*" marks a star import
        elif isinstance(node, ast.Import):
            names.update(a.asname or a.name.split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


def _blocks(node: ast.stmt) -> list[list[ast.stmt]]:
    """The alternative blocks of a compound statement (only one of them runs)."""
    if isinstance(node, (ast.If, ast.For, ast.While)):
        return [node.body, node.orelse]
    if isinstance(node, ast.Try):
        tail = node.orelse + node.finalbody
        return [node.body + tail] + [h.body + node.finalbody for h in node.handlers]
    if isinstance(node, ast.With):
        return [node.body]
    return []


def _subtree(stmts: list[ast.stmt]) -> set[str]:
    names = _direct(stmts)
    for node in stmts:
        for block in _blocks(node):
            names |= _subtree(block)
    return names


def _walk(stmts: list[ast.stmt], outer: set[str], name: str) -> Iterator[tuple[Assignment, set[str]]]:
    visible = outer | _subtree(stmts)
    for node in stmts:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            yield node, visible
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            yield node, visible
        for block in _blocks(node):
            yield from _walk(block, outer | _direct(stmts), name)


def assignments(tree: ast.Module, name: str) -> list[tuple[Assignment, set[str]]]:
    """Each module-level assignment of `name` (branches included) and the names visible there.

    At the top level every binding anywhere counts; inside a branch, only what that branch
    binds and what the blocks around it bind directly.
    """
    return list(_walk(tree.body, set(), name))
