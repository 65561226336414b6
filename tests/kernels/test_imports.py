"""kernels/ runs on device runners that have only torch, triton, numpy, PyYAML and flagbot installed."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GENERATED = ROOT / "kernels" / "experimental"
# PyYAML is a core dependency of flagbot, so `pip install flagbot[kernels]` brings it.
# flagbot.exit_codes: the exit codes every side shares (it imports nothing).
ALLOWED = {"torch", "triton", "numpy", "yaml", "flagbot", "flagbot.kernels", "flagbot.exit_codes"}
# matplotlib (kernels extra) only where --plot draws, imported when a plot is asked for.
PLOTTING = ("plot.py", {"matplotlib"})
# What the backend checker imports from the device side: it must not pull torch or triton.
LAYOUT_MODULES = ("flaggems_layout", "tune_configs", "yamlload")


def _root(name: str) -> str:
    """The top-level package, or `flagbot.<side>` for flagbot's own (the sides must not mix)."""
    parts = name.split(".")
    return ".".join(parts[:2]) if parts[0] == "flagbot" else parts[0]


def _imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            roots |= {_root(alias.name) for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(_root(node.module))
    return roots


def test_kernels_imports_only_stdlib_torch_triton_numpy_yaml() -> None:
    offenders = {}
    for path in sorted((ROOT / "kernels").rglob("*.py")):
        if path.parent.parent == GENERATED and path.parent.name != "ops":
            continue  # generated operators: `kernels import` imports each in a fresh process
        extra = PLOTTING[1] if path.name == PLOTTING[0] else set()
        bad = {r for r in _imported_roots(path)
               if r not in ALLOWED | extra and r not in sys.stdlib_module_names}
        if bad:
            offenders[str(path.relative_to(ROOT))] = sorted(bad)
    assert offenders == {}


def _loaded_after(imports: str, forbidden: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    code = (f"import sys, {imports};"
            f"bad = [m for m in {forbidden!r} if m in sys.modules];"
            "print(bad); raise SystemExit(1 if bad else 0)")
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, env={"TRITON_INTERPRET": "1", "PATH": "/usr/bin:/bin"})


def test_running_the_check_never_loads_hooks_or_bot() -> None:
    proc = _loaded_after("flagbot.kernels.cli, flagbot.kernels.check, flagbot.kernels.report, "
                         "flagbot.kernels.loader", ("flagbot.hooks", "flagbot.bot"))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_layout_modules_the_checker_shares_load_neither_torch_nor_triton() -> None:
    imports = ", ".join(f"flagbot.kernels.{m}" for m in LAYOUT_MODULES)
    proc = _loaded_after(imports, ("torch", "triton", "flagbot.hooks", "flagbot.bot"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
