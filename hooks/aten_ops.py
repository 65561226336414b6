"""ATen operator names: a shipped list first, the installed torch only for names it lacks.

The checkers run at every commit, and `import torch` costs seconds, so the hot path reads
`hooks/data/aten_ops.txt` (regenerate with `python -m flagbot.hooks.aten_ops --regenerate`). A name
missing from the list may come from a newer torch, so torch is asked, lazily, when importable
(set FLAGBOT_NO_TORCH=1 to never import it).
"""

from __future__ import annotations

import argparse
import difflib
import functools
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "aten_ops.txt"
PREFIX = "aten::"


def _split(lines: Sequence[str]) -> frozenset[str]:
    return frozenset(s for s in (line.strip() for line in lines) if s and not s.startswith("#"))


@functools.lru_cache(maxsize=1)
def shipped_ops() -> frozenset[str]:
    """`name` / `name.overload` entries of the shipped list (empty if the file is missing)."""
    try:
        return _split(DATA.read_text(encoding="utf-8").splitlines())
    except FileNotFoundError:
        return frozenset()


def _schema_names(schemas: Sequence[Any]) -> list[str]:
    names: set[str] = set()
    for schema in schemas:
        full, overload = str(schema.name), str(schema.overload_name)
        if full.startswith(PREFIX):
            base = full[len(PREFIX):]
            names.add(f"{base}.{overload}" if overload else base)
    return sorted(names)


@functools.lru_cache(maxsize=1)
def torch_ops() -> frozenset[str] | None:
    """The installed torch's aten operator names, or None when torch is absent or disabled."""
    if os.environ.get("FLAGBOT_NO_TORCH"):
        return None
    try:
        import torch
    except Exception:  # any import failure means "no torch here", never a crash of the checker
        return None
    return frozenset(_schema_names(torch._C._jit_get_all_schemas()))


@functools.lru_cache(maxsize=4)
def _bases(ops: frozenset[str]) -> frozenset[str]:
    return frozenset(name.split(".", 1)[0] for name in ops)


def _known(name: str, ops: frozenset[str], allow_base: bool) -> bool:
    return name in ops or (allow_base and name in _bases(ops))


def is_aten_op(name: str, *, allow_base: bool = False) -> bool:
    """True if `name` (optionally `aten::`-prefixed) is `op` or `op.overload` of a real operator.

    `allow_base` also accepts a bare base name whose only overloads are named (`add` for
    `add.Tensor`); exact registration (FlagGems' `get_specific_ops`) must not allow it.
    """
    name = name[len(PREFIX):] if name.startswith(PREFIX) else name
    if _known(name, shipped_ops(), allow_base):
        return True
    live = torch_ops()
    return live is not None and _known(name, live, allow_base)


def suggest(name: str, limit: int = 3) -> list[str]:
    """Close real names, for messages ("did you mean add.Tensor?")."""
    name = name[len(PREFIX):] if name.startswith(PREFIX) else name
    ops = shipped_ops() | (torch_ops() or frozenset())
    base = name.split(".", 1)[0]
    same_base = sorted(op for op in ops if op.split(".", 1)[0] == base and op != name)
    if same_base:
        close = difflib.get_close_matches(name, same_base, n=limit, cutoff=0.6)
        return close + [op for op in same_base if op not in close][: limit - len(close)]
    return difflib.get_close_matches(name, sorted(ops), n=limit)


def regenerate(path: Path = DATA) -> int:
    """Write the list from the installed torch; returns the number of names."""
    import torch

    names = _schema_names(torch._C._jit_get_all_schemas())
    header = [
        "# ATen operator names (name or name.overload), one per line.",
        f"# Generated from torch {torch.__version__} by: python -m flagbot.hooks.aten_ops --regenerate",
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(header + names) + "\n", encoding="utf-8")
    return len(names)


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m flagbot.hooks.aten_ops --regenerate | NAME ...` (exit 1 if a NAME is not an operator)."""
    parser = argparse.ArgumentParser(prog="python -m flagbot.hooks.aten_ops", description=__doc__)
    parser.add_argument("--regenerate", action="store_true", help=f"rewrite {DATA.name} from torch")
    parser.add_argument("names", nargs="*", help="names to look up")
    args = parser.parse_args(argv)
    if args.regenerate:
        try:
            count = regenerate()
        except ImportError:
            print("torch is not importable here; install torch and run again", file=sys.stderr)
            return 2
        print(f"wrote {count} operator names to {DATA}")
    bad = [n for n in args.names if not is_aten_op(n)]
    for name in bad:
        print(f"{name}: not an aten operator; did you mean {', '.join(suggest(name)) or '?'}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
