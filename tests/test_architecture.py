"""The layout's promises: no import cycles in production code, the sides import only downward."""

from __future__ import annotations

import ast
from pathlib import Path

from testing.layout import module_files


def _resolve(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def executed(name: str, files: dict[str, Path]) -> set[str]:
    """The flagbot modules Python runs to import `name`: every enclosing package's `__init__`
    (outermost first in practice) and the module itself."""
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts) + 1)} & files.keys()


def import_graph() -> dict[str, set[str]]:
    """Every flagbot module -> the flagbot modules importing it executes, from anywhere in its
    body: `from pkg import mod` runs pkg/__init__.py (and its parents') before mod."""
    files = module_files()
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    targets |= executed(alias.name, files)
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(module, node, path.name == "__init__.py")
                targets |= executed(base, files)
                # `from pkg import mod` imports the submodule when there is one
                for alias in node.names:
                    if f"{base}.{alias.name}" in files:
                        targets.add(f"{base}.{alias.name}")
        graph[module] = targets - {module}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle as [a, b, ..., a], or [] when the graph has none."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_the_cycle_finder_finds_a_planted_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) == []


def test_the_graph_counts_the_package_inits_an_import_runs() -> None:
    files = {name: Path(name) for name in ("p", "p.q", "p.q.m", "p.r")}
    assert executed("p.q.m", files) == {"p", "p.q", "p.q.m"}
    graph = import_graph()
    # experimental/ops/__init__.py imports a module of kernels.imports: the package counts
    assert "flagbot.kernels.intake" in graph["flagbot.kernels.experimental.ops"]
    assert "flagbot" in graph["flagbot.kernels.experimental.ops"]


def test_production_code_has_no_import_cycles() -> None:
    graph = import_graph()
    assert len(graph) > 50, "the walk found too few modules to be trusted"
    assert find_cycle(graph) == []


# The package's own root: its __init__ and the exit codes every side shares (they import nothing).
SHARED_ROOT = {"flagbot", "flagbot.exit_codes"}


def test_the_shared_root_imports_nothing() -> None:
    graph = import_graph()
    assert {m: graph[m] for m in SHARED_ROOT} == {m: set() for m in SHARED_ROOT}


def test_the_device_side_imports_neither_other_side() -> None:
    graph = import_graph()
    crossing = {m: sorted(t for t in targets if not t.startswith("flagbot.kernels")
                          and t not in SHARED_ROOT)
                for m, targets in graph.items() if m.startswith("flagbot.kernels")}
    assert {m: t for m, t in crossing.items() if t} == {}


def test_the_local_side_never_imports_the_server() -> None:
    graph = import_graph()
    up = {m: sorted(t for t in targets if t.startswith("flagbot.bot"))
          for m, targets in graph.items() if m.startswith("flagbot.hooks")}
    assert {m: t for m, t in up.items() if t} == {}


# The device side's torch-free description of the FlagGems layout, shared with the checker.
SHARED_LAYOUT = {"flagbot.kernels.flaggems_layout", "flagbot.kernels.tune_configs",
                 "flagbot.kernels.yamlload"}
# ... and the package init importing them runs (it imports nothing itself)
SHARED_LAYOUT_PACKAGES = {"flagbot.kernels"}


def test_the_device_side_package_init_imports_nothing() -> None:
    assert import_graph()["flagbot.kernels"] == set()


def test_the_local_side_takes_only_the_layout_description_from_the_device_side() -> None:
    graph = import_graph()
    down = {m: sorted(t for t in targets
                      if t.startswith("flagbot.kernels")
                      and t not in SHARED_LAYOUT | SHARED_LAYOUT_PACKAGES)
            for m, targets in graph.items() if m.startswith("flagbot.hooks")}
    assert {m: t for m, t in down.items() if t} == {}
