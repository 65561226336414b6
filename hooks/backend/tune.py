"""`tune_configs.yaml`: syntax, duplicate keys, entry schema, unreferenced keys.

The file is read and checked by kernels/tune_configs.py, the reading `flagbot kernels check`
uses too, so the problems found here are exactly those that stop the harness (and FlagGems)
from loading the file; this module turns them into findings.
"""

from __future__ import annotations

from pathlib import Path

from flagbot.hooks.backend.context import FSTRING_PREFIX_RE, STRING_RE
from flagbot.hooks.backend.vendor import Vendor
from flagbot.kernels.tune_configs import read_tune


def check_tune(v: Vendor, path: Path) -> dict[str, int]:
    """Check one tune_configs.yaml; return its op keys and their lines (empty if unreadable)."""
    text = v.sources.text(path)
    if text is None or str(path) in v.sources.oversized:
        return {}  # an oversized file is reported by the vendor's check
    tune = read_tune(text)
    for problem in tune.problems:
        v.add(problem.rule, path, problem.line, problem.message)
    return tune.keys


def check_referenced(v: Vendor, path: Path, keys: dict[str, int], python_files: list[str]) -> None:
    """Warn about tune keys no operator code names (only with a FlagGems context)."""
    ctx = v.context
    if ctx is None or not keys:
        return
    strings, prefixes = set(ctx.strings), list(ctx.prefixes)
    for file in python_files:
        text = v.sources.text(file) or ""
        strings.update(STRING_RE.findall(text))
        prefixes.extend(FSTRING_PREFIX_RE.findall(text))
    for key, line in sorted(keys.items()):
        if key in strings or any(key.startswith(p) for p in prefixes):
            continue
        v.add("tune-key-unreferenced", path, line, f"tune key {key!r} is not named "
              "by any operator code (get_tuned_config / libtuner); it may be dead or misspelled")
