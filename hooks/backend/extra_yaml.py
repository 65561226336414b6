"""The other YAML files FlagGems loads from a vendor folder: `*_expand.yaml`, `enable_configs.yaml`.

Both are read with `yaml.safe_load` by FlagGems (the flagtune search spaces by
`backend_utils.get_expand_config`, the default op selection by `config.py` when a user calls
`enable()` / `use_gems()` without a list), so a syntax error there breaks the operator or
the call at run time, not at import. They are read like tune_configs.yaml: syntax, duplicate
keys, then the shape their reader expects:
- `<op>_<arch|vendor>_expand.yaml`, `general_ops_<...>_expand.yaml`: op key -> list of entries,
  each a search space (a `param_map`, marked `config:` or `gen: true` or not, whose values
  name sibling lists, or are lists or integers) or a `strategy` mapping;
- `enable_configs.yaml`: `include:` and/or `exclude:`, each a list of function names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flagbot.hooks.backend.vendor import Vendor
from flagbot.kernels.flaggems_layout import META, PARAM_MAP, arch_candidates
from flagbot.kernels.yamlload import load_yaml

EXPAND_SUFFIX = "_expand.yaml"
ENABLE_FILE = "enable_configs.yaml"
ENABLE_KEYS = ("include", "exclude")
SCHEMA = "config-schema"
# Upstream search-space entries carry `config:` (null), `gen: true`, or only their param_map.
CONFIG_KEYS = ("config", "gen", PARAM_MAP)


def extra_yaml_files(folder: Path) -> list[Path]:
    """The expand and enable files of the vendor folder and of each arch candidate."""
    out: list[Path] = []
    for where in (folder, *arch_candidates(folder)):
        if where.is_dir():
            out += sorted(p for p in where.iterdir()
                          if p.is_file() and (p.name.endswith(EXPAND_SUFFIX) or p.name == ENABLE_FILE))
    return out


def _line(container: Any, key: Any, default: int) -> int:
    lines = getattr(container, "key_lines", None)
    return lines.get(key, default) if isinstance(lines, dict) else default


def _ref_problem(entry: dict[Any, Any], name: str, ref: Any) -> str | None:
    if isinstance(ref, str):
        target = entry.get(ref)
        return None if isinstance(target, list) and target else \
            f"param_map {name} names {ref!r}, which is not a non-empty list beside param_map"
    if isinstance(ref, list):
        return None if ref else f"param_map {name} is an empty list"
    if isinstance(ref, int) and not isinstance(ref, bool):
        return None
    return f"param_map {name} must name a list, be a list or an integer, got {ref!r}"


def _expand_entry(v: Vendor, path: Path, op: str, entry: Any, line: int) -> None:
    if not isinstance(entry, dict) or not any(k in entry for k in (*CONFIG_KEYS, "strategy")):
        v.add(SCHEMA, path, line, f"{op}: each entry is a search space (a param_map, with "
              "`config:` or `gen: true` or alone) or a `strategy` mapping")
        return
    if "strategy" in entry and not isinstance(entry["strategy"], dict):
        v.add(SCHEMA, path, _line(entry, "strategy", line), f"{op}: strategy must be a mapping "
              "of argument -> strategy name")
    if not any(k in entry for k in CONFIG_KEYS):
        return
    pmap = entry.get(PARAM_MAP)
    if not isinstance(pmap, dict):
        v.add(SCHEMA, path, line, f"{op}: a config entry needs a param_map mapping")
        return
    for key, ref in pmap.items():
        at = _line(pmap, key, line)
        if key == META and isinstance(ref, dict):
            checks = [(f"META.{name}", sub, _line(ref, name, at)) for name, sub in ref.items()]
        else:
            checks = [(str(key), ref, at)]
        for name, sub, where in checks:
            problem = _ref_problem(entry, name, sub)
            if problem:
                v.add(SCHEMA, path, where, f"{op}: {problem}")


def _check_expand(v: Vendor, path: Path, data: Any) -> None:
    if not isinstance(data, dict):
        v.add(SCHEMA, path, 1, "an expand file is a mapping of op key -> list of entries")
        return
    for op, entries in data.items():
        line = _line(data, op, 1)
        if not isinstance(entries, list) or not entries:
            v.add(SCHEMA, path, line, f"{op}: must be a non-empty list of entries")
            continue
        lines = getattr(entries, "item_lines", [line] * len(entries))
        for entry, at in zip(entries, lines, strict=False):
            _expand_entry(v, path, str(op), entry, at)


def _check_enable(v: Vendor, path: Path, data: Any) -> None:
    if data is None:
        return  # an empty file: FlagGems reads it as no list
    if not isinstance(data, dict):
        v.add(SCHEMA, path, 1, "enable_configs.yaml is a mapping with `include:` and/or "
              "`exclude:` lists of function names")
        return
    for key, names in data.items():
        line = _line(data, key, 1)
        if key not in ENABLE_KEYS:
            v.add(SCHEMA, path, line, f"key {key!r} is not read (FlagGems reads include and "
                  "exclude)")
        elif not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            v.add(SCHEMA, path, line, f"{key} must be a list of function names")


def check_extra_yaml(v: Vendor, path: Path) -> None:
    """Syntax, duplicate keys and shape of one expand or enable file."""
    text = v.sources.text(path)
    if text is None:
        return
    if str(path) in v.sources.oversized:
        v.add("file-too-large", path, 0, str(v.sources.oversized[str(path)]))
        return
    loaded = load_yaml(text)
    if loaded.error is not None:
        line, msg = loaded.error
        v.add("yaml-syntax", path, line, f"not valid YAML: {msg}; FlagGems fails when it loads "
              f"this file")
        return
    for line, what in loaded.duplicates:
        v.add("yaml-duplicate-key", path, line, f"duplicate key {what}; YAML loaders keep only "
              "the last one, silently dropping the other")
    if path.name == ENABLE_FILE:
        _check_enable(v, path, loaded.data)
    else:
        _check_expand(v, path, loaded.data)
