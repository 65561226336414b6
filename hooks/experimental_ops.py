"""Operators taken in by `flagbot kernels import`, as names the backend checker knows.

Read from the device side's index, `kernels/experimental/_metadata.json` (plain JSON, so the
hooks import neither torch nor the device side): each operator's function name and aten names.
"""

from __future__ import annotations

import json
from pathlib import Path

INDEX = Path(__file__).resolve().parents[1] / "kernels" / "experimental" / "_metadata.json"


def imported_names(index: Path | None = None) -> frozenset[str]:
    """Function, aten and overload-less aten names of every imported operator (none if absent)."""
    try:
        data = json.loads((index or INDEX).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return frozenset()
    ops = data.get("ops") if isinstance(data, dict) else None
    names: set[str] = set()
    for record in ops.values() if isinstance(ops, dict) else ():
        if not isinstance(record, dict):
            continue
        if isinstance(record.get("entry"), str):
            names.add(record["entry"])
        for aten in record.get("aten") or ():
            if isinstance(aten, str):
                names.update((aten, aten.split(".", 1)[0]))
    return frozenset(names)
