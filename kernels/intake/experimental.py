"""The imported operators' folder, `kernels/experimental/`, read back: index, functions, specs.

Layout: `<category>/<op>.py` and `<category>/test_<op>.py` per operator, `_metadata.json`
(the index: one record per operator), and a FlagGems-form backend shim (`__init__.py`,
`ops/__init__.py`) so that `flagbot kernels check --backend kernels/experimental` checks them.
The index is plain JSON on purpose: tools that must not import torch read it directly.
"""

from __future__ import annotations

import json
import re
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flagbot.kernels.backend_modules import exec_module_at

ROOT = Path(__file__).resolve().parents[1] / "experimental"
INDEX = "_metadata.json"
SCHEMA = "flagbot.kernels.experimental/1"

SCAFFOLD = {
    "__init__.py": '''\
"""Generated operators taken in by `flagbot kernels import`; the index is _metadata.json.

A backend in the FlagGems form, so `flagbot kernels check --backend kernels/experimental`
checks every imported operator against torch.
"""

from flagbot.kernels.backend_utils import VendorInfoBase

vendor_info = VendorInfoBase(vendor_name="experimental", device_name="any",
                             device_query_cmd="")
''',
    "heuristics_config_utils.py": '''\
"""Generated operators pick their launch parameters themselves: no heuristics here."""

HEURISTICS_CONFIGS: dict[str, dict[str, object]] = {}
''',
    "tune_configs.yaml": "# Generated operators pick their launch parameters themselves: no tune entries.\n{}\n",
    "ops/__init__.py": '''\
"""The imported operators as `get_specific_ops()` entries, read from ../_metadata.json."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from flagbot.kernels.intake.experimental import specific_ops


def get_specific_ops() -> list[tuple[str, Callable[..., Any]]]:
    """(aten name, function) of every operator in the index."""
    return specific_ops(Path(__file__).resolve().parents[1])
''',
}


class BrokenIndex(Exception):
    """_metadata.json is unreadable or not an index (the message names the file)."""


def empty_index() -> dict[str, Any]:
    """An index with no operators."""
    return {"schema": SCHEMA, "ops": {}}


def read_index(root: Path) -> dict[str, Any]:
    """The index under `root`; an empty one when the folder or the file does not exist."""
    path = root / INDEX
    if not path.exists():
        return empty_index()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise BrokenIndex(f"{path}: unreadable ({exc}); restore it from version control") from exc
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or \
            not isinstance(data.get("ops"), dict):
        raise BrokenIndex(f"{path}: not a {SCHEMA} index")
    return data


def load_function(root: Path, record: dict[str, Any]) -> Callable[..., Any]:
    """Import one operator's module by path (under a unique name) and return its function."""
    path = root / record["module"]
    slug = re.sub(r"\W", "_", str(record["module"]).removesuffix(".py"))
    name = f"flagbot_experimental_{zlib.crc32(str(root).encode()):08x}_{slug}"
    module = sys.modules.get(name) or exec_module_at(name, path)
    func: Callable[..., Any] = getattr(module, record["entry"])
    return func


def specific_ops(root: Path) -> list[tuple[str, Callable[..., Any]]]:
    """(aten name, function) for each indexed operator, in name order."""
    ops = read_index(root)["ops"]
    return [(ops[name]["aten"][0], load_function(root, ops[name])) for name in sorted(ops)]


def specs(root: Path | None = None) -> dict[str, Any]:
    """name -> OpSpec of each indexed operator (reference and inputs from its aten schema)."""
    import torch

    from flagbot.kernels.intake.schema import SchemaError, build_spec, resolve

    folder = ROOT if root is None else root
    try:
        ops = read_index(folder)["ops"]
    except BrokenIndex:
        return {}  # `kernels check` reports the broken index when it loads the folder
    table: dict[str, Any] = {}
    for name, record in sorted(ops.items()):
        dtypes = [getattr(torch, d) for d in record.get("dtypes", ["float32"])
                  if isinstance(getattr(torch, d, None), torch.dtype)]
        try:
            table[name] = build_spec(resolve(record["aten"][0]), name, record.get("params", {}),
                                     [tuple(s) for s in record.get("shapes", [])],
                                     dtypes or [torch.float32])
        except SchemaError:
            continue  # an operator the installed torch lacks: unknown here, as any other
    return table
