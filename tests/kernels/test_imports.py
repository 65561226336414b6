"""kernels/ runs on device runners that have only torch, triton, numpy and this checkout."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GENERATED = ROOT / "kernels" / "experimental"
ALLOWED = {"torch", "triton", "numpy", "flagbot", "flagbot.kernels"}


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


def test_kernels_imports_only_stdlib_torch_triton_numpy() -> None:
    offenders = {}
    for path in sorted((ROOT / "kernels").rglob("*.py")):
        if path.parent.parent == GENERATED and path.parent.name != "ops":
            continue  # generated operators: `kernels import` imports each in a fresh process
        bad = {r for r in _imported_roots(path)
               if r not in ALLOWED and r not in sys.stdlib_module_names}
        if bad:
            offenders[str(path.relative_to(ROOT))] = sorted(bad)
    assert offenders == {}


def test_running_the_check_never_loads_hooks_or_bot_or_yaml() -> None:
    code = ("import sys, flagbot.kernels.cli, flagbot.kernels.check, flagbot.kernels.report, flagbot.kernels.loader;"
            "bad = [m for m in ('flagbot.hooks', 'flagbot.bot', 'yaml') if m in sys.modules];"
            "print(bad); raise SystemExit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, env={"TRITON_INTERPRET": "1", "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
