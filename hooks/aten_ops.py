"""ATen operator names of several torch releases: a shipped list first, the installed torch after.

The checkers run at every commit, and `import torch` costs seconds, so the hot path reads
`hooks/data/aten_ops.txt`: the union of the operator schemas of the torch releases its header
names (each release's `native_functions.yaml`, `func:` and `autogen:` entries, plus the
TorchScript-registered names of one installed torch). A name that only some releases have
carries those releases, so a check can say "only in torch 2.10, 2.11". A name missing from the
list may come from a newer torch, so torch is asked, lazily, when importable (set
FLAGBOT_NO_TORCH=1 to never import it). Sources and the regeneration command:
hooks/data/README.md.
"""

from __future__ import annotations

import argparse
import difflib
import functools
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "aten_ops.txt"
PREFIX = "aten::"
RELEASES_TAG = "# releases:"
_FUNC = re.compile(r"^- func:\s*([\w.]+)\(", re.M)
_AUTOGEN = re.compile(r"^\s+autogen:\s*(.+)$", re.M)


@functools.lru_cache(maxsize=1)
def _table() -> tuple[tuple[str, ...], dict[str, tuple[str, ...]]]:
    """(releases, name -> the releases that have it; () for every release)."""
    try:
        lines = DATA.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return (), {}
    releases: tuple[str, ...] = ()
    names: dict[str, tuple[str, ...]] = {}
    for line in lines:
        if line.startswith(RELEASES_TAG):
            releases = tuple(line[len(RELEASES_TAG):].split())
        elif line.strip() and not line.startswith("#"):
            name, *only = line.split()
            names[name] = tuple(only)
    return releases, names


def shipped_releases() -> tuple[str, ...]:
    """The torch releases the shipped list covers, oldest first."""
    return _table()[0]


@functools.lru_cache(maxsize=1)
def shipped_ops() -> frozenset[str]:
    """`name` / `name.overload` entries of the shipped list (empty if the file is missing)."""
    return frozenset(_table()[1])


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


@functools.lru_cache(maxsize=1)
def _base_releases() -> dict[str, tuple[str, ...]]:
    """Base name -> the releases having some overload of it (() for every release)."""
    releases, names = _table()
    found: dict[str, set[str]] = {}
    for name, only in names.items():
        found.setdefault(name.split(".", 1)[0], set()).update(only or releases)
    return {base: () if len(have) == len(releases) else tuple(r for r in releases if r in have)
            for base, have in found.items()}


def _strip(name: str) -> str:
    return name[len(PREFIX):] if name.startswith(PREFIX) else name


def _known(name: str, ops: frozenset[str], allow_base: bool) -> bool:
    return name in ops or (allow_base and name in _bases(ops))


def is_aten_op(name: str, *, allow_base: bool = False) -> bool:
    """True if `name` (optionally `aten::`-prefixed) is `op` or `op.overload` of a real operator.

    `allow_base` also accepts a bare base name whose only overloads are named (`add` for
    `add.Tensor`); exact registration (FlagGems' `get_specific_ops`) must not allow it.
    """
    name = _strip(name)
    if _known(name, shipped_ops(), allow_base):
        return True
    live = torch_ops()
    return live is not None and _known(name, live, allow_base)


def only_in(name: str, *, allow_base: bool = False) -> tuple[str, ...]:
    """The shipped releases that have `name`, when some lack it; () when all have it or none."""
    name = _strip(name)
    only = _table()[1].get(name)
    if only is None and allow_base:
        only = _base_releases().get(name)
    return only or ()


@functools.lru_cache(maxsize=1)
def _function_bases() -> frozenset[str]:
    out: set[str] = set()
    for base in _bases(shipped_ops()):
        for form in (base, base.lstrip("_"), base.removeprefix("native_")):
            out.update((form, form.rstrip("_")))
    return frozenset(out)


def is_function_name(name: str) -> bool:
    """Whether `name` can be the Python name FlagGems gives an ATen op's function.

    FlagGems names them lower case after the op, its overload or a variant appended
    (`add`, `pow_tensor_scalar`, `bitwise_and_scalar_`, `sum_dim`, `to_copy` for `_to_copy`):
    a name is accepted when it is lower case and starts with an ATen base name at a `_`.
    Used where no FlagGems tree says which functions exist.
    """
    if name != name.lower():
        return False
    parts = name.strip("_").split("_")
    bases = _function_bases()
    return any("_".join(parts[:i]) in bases for i in range(len(parts), 0, -1))


def suggest(name: str, limit: int = 3) -> list[str]:
    """Close real names, for messages ("did you mean add.Tensor?").

    The base name is matched first: `sillu.Tensor` should suggest `silu`, not every `*.Tensor`.
    """
    name = _strip(name)
    ops = shipped_ops() | (torch_ops() or frozenset())
    base, _, overload = name.partition(".")
    overloads: dict[str, list[str]] = {}
    for op in ops:
        overloads.setdefault(op.split(".", 1)[0], []).append(op)
    if base in overloads:
        same = sorted(op for op in overloads[base] if op != name)
        close = difflib.get_close_matches(name, same, n=limit, cutoff=0.6)
        return close + [op for op in same if op not in close][: limit - len(close)]
    out: list[str] = []
    for near in difflib.get_close_matches(base, list(overloads), n=limit, cutoff=0.6):
        exact = f"{near}.{overload}"
        if overload and exact in ops:
            out.append(exact)
        elif near in ops:
            out.append(near)
        else:
            out.extend(difflib.get_close_matches(exact, overloads[near], n=1, cutoff=0) or [near])
    return out[:limit]


def yaml_names(text: str) -> set[str]:
    """Operator names a `native_functions.yaml` declares (`func:` and `autogen:` entries)."""
    names = set(_FUNC.findall(text))
    for line in _AUTOGEN.findall(text):
        names.update(part.strip() for part in line.split(",") if part.strip())
    return names


def render(releases: dict[str, set[str]], always: set[str], sources: list[str]) -> str:
    """The data file: every name, with the releases that have it when some lack it."""
    order = list(releases)
    declared = set().union(*releases.values())
    every = (set.intersection(*releases.values()) if releases else set()) | (always - declared)
    lines = ["# ATen operator names (name or name.overload), one per line. A name followed by",
             "# releases exists only in those torch releases; the others are in all of them.",
             f"{RELEASES_TAG} {' '.join(order)}", *(f"# source: {s}" for s in sources),
             "# regenerate: python -m flagbot.hooks.aten_ops --regenerate (see hooks/data/README.md)"]
    for name in sorted(set().union(always, *releases.values())):
        lines.append(name if name in every else
                     " ".join([name, *(r for r in order if name in releases[r])]))
    return "\n".join(lines) + "\n"


def regenerate(yamls: Sequence[str], path: Path = DATA, *, torchscript: bool = True) -> int:
    """Write the list from `RELEASE=native_functions.yaml` pairs and the installed torch."""
    releases: dict[str, set[str]] = {}
    sources: list[str] = []
    for spec in yamls:
        release, _, file = spec.partition("=")
        releases[release] = yaml_names(Path(file).read_text(encoding="utf-8"))
        sources.append(f"{release}: native_functions.yaml of torch {release} "
                       f"({len(releases[release])} names)")
    always: set[str] = set()
    if torchscript:
        import torch

        always = set(_schema_names(torch._C._jit_get_all_schemas()))
        sources.append(f"all: TorchScript schemas of the installed torch {torch.__version__} "
                       "(names no native_functions.yaml declares are taken as in every release)")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(releases, always, sources), encoding="utf-8")
    return len(set().union(always, *releases.values()))


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m flagbot.hooks.aten_ops --regenerate REL=YAML ... | NAME ...` (1 if a NAME is unknown)."""
    parser = argparse.ArgumentParser(prog="python -m flagbot.hooks.aten_ops", description=__doc__)
    parser.add_argument("--regenerate", nargs="+", metavar="RELEASE=YAML",
                        help=f"rewrite {DATA.name} from these native_functions.yaml files and torch")
    parser.add_argument("names", nargs="*", help="names to look up")
    args = parser.parse_args(argv)
    if args.regenerate:
        try:
            count = regenerate(args.regenerate)
        except ImportError:
            print("torch is not importable here; install torch and run again", file=sys.stderr)
            return 2
        print(f"wrote {count} operator names to {DATA}")
    bad = [n for n in args.names if not is_aten_op(n)]
    for name in bad:
        print(f"{name}: not an aten operator; did you mean {', '.join(suggest(name)) or '?'}")
    for name in args.names:
        if name not in bad and only_in(name):
            print(f"{name}: only in torch {', '.join(only_in(name))}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
