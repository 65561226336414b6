"""`tune_configs.yaml`: explicit and generator entries, duplicate keys, unreferenced keys.

Schema as FlagGems' TunedConfigLoader reads it (notes: flaggems-backends.md §1.6): a mapping of
op key -> list of entries; an explicit entry is `META` + launch parameters, a generator entry is
`gen: true` + `param_map` whose string values name sibling lists.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flagbot.hooks.backend.context import FSTRING_PREFIX_RE, STRING_RE
from flagbot.hooks.backend.vendor import Vendor
from flagbot.hooks.backend.yamlload import YDict, YList, load_yaml

LAUNCH = ("num_warps", "num_stages", "num_ctas", "maxnreg", "num_ldmatrixes")
EXPLICIT_KEYS = ("META", *LAUNCH)


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def launch_problem(key: str, value: Any) -> str | None:
    """Why `value` is not a valid `key` launch parameter, or None."""
    if key == "maxnreg" and value is None:
        return None
    if not _is_int(value):
        return f"{key} must be an integer, got {value!r}"
    if key == "num_warps" and (value <= 0 or value & (value - 1)):
        return f"num_warps must be a power of two, got {value}"
    if key in ("num_ctas", "maxnreg") and value <= 0:
        return f"{key} must be positive, got {value}"
    if value < 0:
        return f"{key} must not be negative, got {value}"
    return None


def _line(container: Any, key: Any, default: int) -> int:
    if isinstance(container, YDict):
        return container.key_lines.get(key, container.line)
    return default


def _explicit(v: Vendor, path: Path, op: str, entry: YDict) -> None:
    if "META" not in entry or not isinstance(entry["META"], dict):
        v.add("tune-schema", path, entry.line, f"{op}: an explicit entry needs a META mapping "
              "(constexpr name -> value); use `gen: true` + param_map for a generator")
    elif not all(isinstance(k, str) for k in entry["META"]):
        v.add("tune-schema", path, entry.line, f"{op}: META keys must be constexpr names")
    for key in entry:
        if key not in EXPLICIT_KEYS:
            _unknown(v, path, op, key, _line(entry, key, entry.line))
        elif key != "META":
            problem = launch_problem(key, entry[key])
            if problem:
                v.add("tune-schema", path, _line(entry, key, entry.line), f"{op}: {problem}")


def _unknown(v: Vendor, path: Path, op: str, key: Any, line: int) -> None:
    # FlagGems' loaders copy only the launch parameters they know into triton.Config and drop
    # the rest, so a vendor compile option (Ascend's `multibuffer`) is ignored, not fatal.
    v.add("tune-unknown-key", path, line, f"{op}: key {key!r} is ignored by FlagGems' config "
          f"loader (it reads {', '.join(EXPLICIT_KEYS)}); remove it or pass it another way")


def _named_list(v: Vendor, path: Path, op: str, entry: YDict, pkey: str, ref: str, line: int) -> Any:
    target = entry.get(ref)
    if ref not in entry or not isinstance(target, list) or not target:
        v.add("tune-schema", path, line, f"{op}: param_map {pkey} names {ref!r}, which is not a "
              "non-empty list beside param_map")
        return None
    return target


def _values(v: Vendor, path: Path, op: str, entry: YDict, pkey: str, ref: Any, line: int) -> list[Any]:
    """The values a param_map entry iterates: a named sibling list, an inline list, or a scalar."""
    if isinstance(ref, str):
        return list(_named_list(v, path, op, entry, pkey, ref, line) or ())
    if isinstance(ref, list):  # the loader iterates inline lists as they are
        if not ref:
            v.add("tune-schema", path, line, f"{op}: param_map {pkey} is an empty list")
        return list(ref)
    if pkey == "META":
        v.add("tune-schema", path, line, f"{op}: param_map META must be a mapping, a list name "
              "or a list of mappings")
        return []
    return [ref]


def _generator(v: Vendor, path: Path, op: str, entry: YDict) -> None:
    if entry["gen"] is not True:
        v.add("tune-schema", path, _line(entry, "gen", entry.line), f"{op}: gen must be true")
    pmap = entry.get("param_map")
    if not isinstance(pmap, YDict):
        v.add("tune-schema", path, entry.line, f"{op}: a generator entry needs a param_map mapping")
        return
    for pkey, ref in pmap.items():
        line = _line(pmap, pkey, pmap.line)
        if pkey not in EXPLICIT_KEYS:
            _unknown(v, path, op, f"param_map.{pkey}", line)
        elif pkey == "META" and isinstance(ref, YDict):
            for const, sub in ref.items():
                if isinstance(sub, (str, list)):
                    _values(v, path, op, entry, f"META.{const}", sub, _line(ref, const, line))
        else:
            for value in _values(v, path, op, entry, pkey, ref, line):
                problem = launch_problem(pkey, value) if pkey != "META" else (
                    None if isinstance(value, dict) else f"META list items must be mappings, got {value!r}")
                if problem:
                    name = f"{ref}: " if isinstance(ref, str) else ""
                    v.add("tune-schema", path, line, f"{op}: {name}{problem}")


def check_tune(v: Vendor, path: Path) -> dict[str, int]:
    """Check one tune_configs.yaml; return its op keys and their lines (empty if unreadable)."""
    text = v.sources.text(path)
    if text is None:
        return {}
    loaded = load_yaml(text)
    if loaded.error is not None:
        line, msg = loaded.error
        v.add("yaml-syntax", path, line, f"not valid YAML: {msg}")
        return {}
    for line, what in loaded.duplicates:
        v.add("yaml-duplicate-key", path, line, f"duplicate key {what}; YAML loaders keep only "
              "the last one, silently dropping the other")
    data = loaded.data
    if not isinstance(data, YDict):
        v.add("tune-schema", path, 1, "the file must be a mapping of op key -> list of configs")
        return {}
    for op, entries in data.items():
        line = _line(data, op, 1)
        if not isinstance(entries, YList) or not entries:
            v.add("tune-schema", path, line, f"{op}: must be a non-empty list of config entries")
            continue
        for entry, at in zip(entries, entries.item_lines, strict=False):
            if not isinstance(entry, YDict):
                v.add("tune-schema", path, at, f"{op}: each entry must be a mapping")
            elif "gen" in entry:
                _generator(v, path, op, entry)
            else:
                _explicit(v, path, op, entry)
    return {str(k): line for k, line in data.key_lines.items()}


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
