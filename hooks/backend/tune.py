"""`tune_configs.yaml`: syntax, duplicate keys, entry schema, unreferenced keys.

The file is read and checked by kernels/tune_configs.py, the reading `flagbot kernels check`
uses too, so the problems found here are exactly those that stop the harness (and FlagGems)
from loading the file; this module turns them into findings.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from flagbot.hooks.backend.context import literal_names
from flagbot.hooks.backend.vendor import Vendor
from flagbot.kernels.tune_configs import read_tune


def check_tune(v: Vendor, path: Path) -> dict[str, int]:
    """Check one tune_configs.yaml; return its op keys and their lines (empty if unreadable)."""
    text = v.sources.text(path)
    if text is None:
        return {}
    if str(path) in v.sources.oversized:
        v.add("file-too-large", path, 0, str(v.sources.oversized[str(path)]))
        return {}
    tune = read_tune(text)
    for problem in tune.problems:
        v.add(problem.rule, path, problem.line, problem.message)
    return tune.keys


def _named(key: str, strings: Collection[str], prefixes: Collection[str]) -> bool:
    return key in strings or any(key.startswith(p) for p in prefixes)


def check_referenced(v: Vendor, path: Path, keys: dict[str, int], python_files: list[str]) -> None:
    """Warn about tune keys no operator code names (only with a FlagGems context)."""
    ctx = v.context
    if ctx is None or not keys:
        return
    left = {key: line for key, line in keys.items() if not _named(key, ctx.strings, ctx.prefixes)}
    if not left:
        return  # the generic code names them all: the vendor's own files need no reading
    strings: set[str] = set()
    prefixes: set[str] = set()
    for file in python_files:
        literal_names(v.sources.text(file) or "", strings, prefixes)
    for key, line in sorted(left.items()):
        if _named(key, strings, prefixes):
            continue
        v.add("tune-key-unreferenced", path, line, f"tune key {key!r} is not named "
              "by any operator code (get_tuned_config / libtuner); it may be dead or misspelled")
