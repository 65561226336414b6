"""Run every backend rule over one vendor folder, in the order a reader would fix them."""

from __future__ import annotations

import os
from pathlib import Path

from flagbot.hooks.backend.arch import check_arch
from flagbot.hooks.backend.context import FlagGemsContext
from flagbot.hooks.backend.descriptor import check_descriptor, check_folder
from flagbot.hooks.backend.extra_yaml import check_extra_yaml, extra_yaml_files
from flagbot.hooks.backend.heuristics import check_heuristics
from flagbot.hooks.backend.ops import check_documented, check_package, check_unused
from flagbot.hooks.backend.pysrc import Module, Sources, literal_strings
from flagbot.hooks.backend.scopes import assignments
from flagbot.hooks.backend.tune import check_referenced, check_tune
from flagbot.hooks.backend.vendor import Vendor
from flagbot.hooks.findings import Finding
from flagbot.kernels.flaggems_layout import HEURISTICS_FILE, TUNE_FILE, tune_files
from flagbot.kernels.flaggems_layout import UNUSED_OPS_NAME as UNUSED

DOCUMENTED_FUNCS = ("get_specific_ops", "get_unused_ops")


def _is_def(mod: Module | None, name: str) -> bool:
    return mod is not None and getattr(mod.bindings.get(name), "kind", None) == "def"


def _check_ops(v: Vendor, init: Module | None) -> None:
    """Ops in either form, then the unused list the form uses."""
    ops_mod = v.module(v.folder / "ops" / "__init__.py") if (v.folder / "ops").is_dir() else None
    documented = _is_def(ops_mod, "get_specific_ops")
    # A tree moved to CUSTOMIZED_UNUSED_OPS but still carrying get_specific_ops() (FlagGems'
    # _tsingmicro did) is loaded the current way: the function is never called.
    hybrid = documented and init is not None and UNUSED in init.bindings \
        and "OpLoader" not in init.bindings
    if ops_mod is not None and documented and not hybrid:
        check_documented(v, v.folder / "ops", ops_mod)
    elif ops_mod is not None:
        v.implemented |= check_package(v, v.folder / "ops", skip=DOCUMENTED_FUNCS if hybrid else ())
    if hybrid and ops_mod is not None:
        v.add("specific-ops-ignored", v.folder / "ops" / "__init__.py",
              ops_mod.bindings["get_specific_ops"].line, f"get_specific_ops() is never called: "
              f"{UNUSED} in __init__.py selects the current loader, which takes the functions "
              "ops/__init__.py imports; remove get_specific_ops()/get_unused_ops()")
    if (v.folder / "fused" / "__init__.py").is_file():
        v.implemented |= check_package(v, v.folder / "fused")
    own = set(v.implemented)  # ops/ and fused/, before the arch folders add theirs
    if init is not None:
        check_arch(v, init)
    if (documented and not hybrid) or init is None:
        return  # the documented form keeps its unused list in get_unused_ops()
    path = v.folder / "__init__.py"
    if UNUSED not in init.bindings or init.tree is None:
        v.add("unused-ops-missing", path, 0, f"{UNUSED} is not defined; FlagGems reads it from "
              f"every vendor (write {UNUSED} = () if nothing is disabled)")
        return
    lists = [node for node, _ in assignments(init.tree, UNUSED)]
    if not v.applies_ops:
        if any(literal_strings(node.value) for node in lists):
            v.add("vendor-lists-ignored", path, lists[0].lineno, f"this FlagGems layout "
                  f"({v.rel(v.context.vendors_path) if v.context and v.context.vendors_path else ''}) "
                  f"never applies {UNUSED} nor the ops of _nvidia; the list has no effect")
        return
    # One list per branch (`if arch_version == 300: ... else: ...`): each is what runs there,
    # with the vendor's own ops and only those every architecture folder implements.
    arches = list(v.arch_implemented.values())
    everywhere = own | (set.intersection(*arches) if arches else set())
    for node in lists:
        check_unused(v, path, node.value, node.lineno, aten_allowed=False,
                     implemented=everywhere if node.col_offset else None)


def python_files(folder: Path) -> list[str]:
    """Every .py file under `folder` (os.walk: pathlib's rglob is several times slower here)."""
    out: list[str] = []
    for directory, subdirs, files in os.walk(folder):
        subdirs[:] = [d for d in subdirs if d != "__pycache__"]
        out.extend(os.path.join(directory, f) for f in files if f.endswith(".py"))
    return sorted(out)


def check_tunes(repo: Path, folder: Path, sources: Sources) -> tuple[list[Finding], dict[str, int]]:
    """Findings of every tune file of `folder`, and the op keys of its own tune_configs.yaml.

    Every tune file the harness loads: the vendor's and each arch candidate's, reached by
    ARCH_MAP or not, so a file is judged the same whichever architecture runs it; and the
    expand and enable files beside them (hooks/backend/extra_yaml.py). Needs no
    FlagGems context, so a parallel run starts it before the context is read.
    """
    v = Vendor(repo=repo, folder=folder, sources=sources)
    own: dict[str, int] = {}
    for tune in tune_files(folder):
        if tune.is_file():
            keys = check_tune(v, tune)
            own = keys if tune == folder / TUNE_FILE else own
    for extra in extra_yaml_files(folder):
        check_extra_yaml(v, extra)
    return v.findings, own


def check_rules(repo: Path, folder: Path, sources: Sources, context: FlagGemsContext | None,
                tune_keys: dict[str, int]) -> list[Finding]:
    """Every rule but the tune files' own; `tune_keys` are those check_tunes returned."""
    v = Vendor(repo=repo, folder=folder, sources=sources, context=context)
    check_folder(v)
    init = v.module(folder / "__init__.py")
    if init is not None:
        check_descriptor(v, init)
    _check_ops(v, init)
    if (folder / HEURISTICS_FILE).is_file():
        check_heuristics(v, folder / HEURISTICS_FILE)
    if context is not None and tune_keys:
        check_referenced(v, folder / TUNE_FILE, tune_keys, python_files(folder))
    v.report_oversized()
    return v.findings


def check_vendor(repo: Path, folder: Path, sources: Sources,
                 context: FlagGemsContext | None = None) -> list[Finding]:
    """All findings for the vendor folder `folder` (absolute), paths relative to `repo`."""
    tune_findings, keys = check_tunes(repo, folder, sources)
    return check_rules(repo, folder, sources, context, keys) + tune_findings
