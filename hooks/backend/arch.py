"""`ARCH_MAP` and arch sub-folders (`_nvidia/hopper/`): mapped folders exist, none unreached.

FlagGems lists every sub-directory except `ops`, `fused` and `_*` as a candidate arch, then picks
the one ARCH_MAP[key] names; arch ops replace vendor ops, arch tune/heuristics come first.
"""

from __future__ import annotations

import ast
from pathlib import Path

from flagbot.hooks.backend.heuristics import NAME as HEURISTICS
from flagbot.hooks.backend.heuristics import check_heuristics
from flagbot.hooks.backend.ops import check_package
from flagbot.hooks.backend.pysrc import Module, assigned_value
from flagbot.hooks.backend.tune import check_tune
from flagbot.hooks.backend.vendor import Vendor

NOT_ARCH = ("ops", "fused")
# What makes a sub-folder an arch folder rather than a helper package (utils/, fla/, int8/).
ARCH_MARKERS = ("ops", "tune_configs.yaml", "heuristics_config_utils.py")


def read_arch_map(v: Vendor, init: Module) -> dict[str, tuple[str, int]] | None:
    """ARCH_MAP as key -> (folder, line); None if absent or unreadable (reported)."""
    binding = init.bindings.get("ARCH_MAP")
    if binding is None:
        return None
    path = v.folder / "__init__.py"
    node = assigned_value(init, "ARCH_MAP")
    if not isinstance(node, ast.Dict):
        v.add("arch-map-folder", path, binding.line, "ARCH_MAP must be a literal dict of "
              "arch key -> sub-folder name")
        return None
    out: dict[str, tuple[str, int]] = {}
    for key, value in zip(node.keys, node.values, strict=False):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)
                and isinstance(value, ast.Constant) and isinstance(value.value, str)):
            v.add("arch-map-folder", path, value.lineno, "ARCH_MAP entries must be string "
                  "literals (\"9\": \"hopper\")")
            continue
        out[key.value] = (value.value, value.lineno)
    return out


def arch_like_folders(folder: Path) -> list[Path]:
    """Sub-folders FlagGems would treat as arches and that carry arch content."""
    out = []
    for child in sorted(folder.iterdir()):
        if not child.is_dir() or child.name in NOT_ARCH or child.name.startswith(("_", ".")):
            continue
        if any((child / marker).exists() for marker in ARCH_MARKERS):
            out.append(child)
    return out


def check_arch(v: Vendor, init: Module) -> list[Path]:
    """Check ARCH_MAP and each arch folder; return the tune_configs.yaml files of mapped arches."""
    arch_map = read_arch_map(v, init) or {}
    path = v.folder / "__init__.py"
    reached: set[str] = set()
    for key, (name, line) in arch_map.items():
        target = v.folder / name
        if name in NOT_ARCH or name.startswith("_") or not target.is_dir():
            v.add("arch-map-folder", path, line, f"ARCH_MAP[{key!r}] = {name!r} is not an arch "
                  f"sub-folder of {v.rel(v.folder)} (FlagGems skips ops, fused and _*)")
            continue
        reached.add(name)
    tunes = []
    for arch in arch_like_folders(v.folder):
        if arch.name not in reached:
            v.add("arch-folder-unreached", arch, 0, f"{arch.name}/ looks like an arch folder but "
                  "no ARCH_MAP key selects it, so its ops and configs are never used")
            continue
        if (arch / "ops" / "__init__.py").is_file():
            v.implemented |= check_package(v, arch / "ops")
        if (arch / "tune_configs.yaml").is_file():
            tunes.append(arch / "tune_configs.yaml")
            check_tune(v, arch / "tune_configs.yaml")
        if (arch / "heuristics_config_utils.py").is_file():
            check_heuristics(v, arch / "heuristics_config_utils.py")
            arch_init = v.module(arch / "__init__.py")
            if arch_init is not None and HEURISTICS not in arch_init.bindings:
                v.add("arch-heuristics-export", arch / "__init__.py", 0, f"{arch.name}/__init__.py "
                      f"does not re-export {HEURISTICS}, so FlagGems falls back to the vendor's; "
                      f"add `from .heuristics_config_utils import {HEURISTICS}`")
    return tunes
