"""What a backend in the FlagGems layout imports as `backend_utils` (the harness provides it).

FlagGems puts `backend_utils` on the path of the vendor folders it loads; backends written for
it say `from backend_utils import Autograd, VendorInfoBase`. The loader (kernels/loader.py)
registers this module under that name. Beyond FlagGems' two names it offers
`get_tuned_config`, which reads a backend's tune_configs.yaml into triton.Config lists.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import triton

from flagbot.kernels.yamlite import YamlError, loads

LAUNCH_KEYS = ("num_warps", "num_stages", "num_ctas", "maxnreg")
DEFAULTS: dict[str, Any] = {"num_warps": 4, "num_stages": 2, "num_ctas": 1, "maxnreg": None}


class Autograd(Enum):
    """Third element of get_specific_ops() tuples: register with autograd or not."""

    enable = True
    disable = False


@dataclass
class VendorInfoBase:
    """A backend's descriptor (`vendor_info` in its __init__.py)."""

    vendor_name: str
    device_name: str
    device_query_cmd: str
    dispatch_key: str | None = None
    triton_extra_name: str | None = None


class TuneConfigError(ValueError):
    """A tune_configs.yaml entry that cannot become a triton.Config (message names it)."""


def interpreted() -> bool:
    """True under TRITON_INTERPRET=1, where autotuning cannot time anything."""
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def _explicit(entry: dict[str, Any], where: str) -> list[dict[str, Any]]:
    meta = entry.get("META")
    if not isinstance(meta, dict):
        raise TuneConfigError(f"{where}: an explicit entry needs a META mapping")
    unknown = set(entry) - {"META", *LAUNCH_KEYS}
    if unknown:
        raise TuneConfigError(f"{where}: unknown keys {sorted(unknown)}")
    return [{"META": dict(meta), **{k: entry.get(k, DEFAULTS[k]) for k in LAUNCH_KEYS}}]


def _choices(entry: dict[str, Any], ref: Any, where: str) -> list[Any]:
    if isinstance(ref, str):
        if not isinstance(entry.get(ref), list):
            raise TuneConfigError(f"{where}: param_map names {ref!r}, which is not a list here")
        return list(entry[ref])
    return list(ref) if isinstance(ref, list) else [ref]


def _generated(entry: dict[str, Any], where: str) -> list[dict[str, Any]]:
    pmap = entry.get("param_map")
    if not isinstance(pmap, dict) or "META" not in pmap:
        raise TuneConfigError(f"{where}: a gen entry needs param_map with META")
    meta_ref = pmap["META"]
    if isinstance(meta_ref, dict):
        names = list(meta_ref)
        metas = [dict(zip(names, combo, strict=True)) for combo in
                 itertools.product(*(_choices(entry, meta_ref[n], where) for n in names))]
    else:
        metas = [dict(m) for m in _choices(entry, meta_ref, where)]
    launch = {k: _choices(entry, pmap[k], where) if k in pmap else [DEFAULTS[k]]
              for k in LAUNCH_KEYS}
    return [{"META": meta, **dict(zip(LAUNCH_KEYS, combo, strict=True))}
            for meta in metas for combo in itertools.product(*launch.values())]


def expand(op: str, entries: Any, source: str) -> list[dict[str, Any]]:
    """The plain {META, num_warps, ...} dicts that one op's list of entries stands for."""
    if not isinstance(entries, list) or not entries:
        raise TuneConfigError(f"{source}: {op}: expected a non-empty list of entries")
    out: list[dict[str, Any]] = []
    for i, entry in enumerate(entries):
        where = f"{source}: {op}[{i}]"
        if not isinstance(entry, dict):
            raise TuneConfigError(f"{where}: an entry is a mapping")
        out.extend(_generated(entry, where) if entry.get("gen") else _explicit(entry, where))
    for cfg in out:
        warps = cfg["num_warps"]
        if not isinstance(warps, int) or warps <= 0 or warps & (warps - 1):
            raise TuneConfigError(f"{source}: {op}: num_warps must be a power of two, got {warps}")
    return out


def read_tune_file(path: str | Path) -> dict[str, Any]:
    """The raw mapping of a tune_configs.yaml (op -> entries)."""
    try:
        data = loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, YamlError) as exc:
        raise TuneConfigError(f"{path}: {exc}") from exc
    if not isinstance(data, dict):
        raise TuneConfigError(f"{path}: the top level must map op names to entry lists")
    return data


def get_tuned_config(op: str, tune_file: str | Path) -> list[triton.Config]:
    """triton.Config list for `op` from `tune_file`; only the first under the interpreter.

    The CPU interpreter has no driver to time candidates with, so a multi-config autotune
    would fail at its first launch (kernels notes, 2.1); CI therefore runs the first entry.
    """
    data = read_tune_file(tune_file)
    if op not in data:
        raise TuneConfigError(f"{tune_file}: no entry for {op!r}; add one or drop the autotune")
    configs = [triton.Config(c["META"], num_warps=c["num_warps"], num_stages=c["num_stages"],
                             num_ctas=c["num_ctas"], maxnreg=c["maxnreg"])
               for c in expand(op, data[op], str(tune_file))]
    return configs[:1] if interpreted() else configs
