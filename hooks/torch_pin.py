"""The torch releases a repository declares it supports, read from its own packaging files.

A PyTorch plugin builds against one torch line (PyTorch-Plugin-FL pins `torch>=2.10,<2.11`
in pyproject.toml and setup.py): judging its routing lines against every release flagbot ships
reports ops that no build of the plugin will ever meet. The pin is read as text (no packaging
library, no import of the project): quoted requirement strings in `pyproject.toml`, `setup.py`
and `setup.cfg`, and `torch...` lines of `requirements*.txt`. Specifiers are judged per
release line (major.minor): a line is supported when some version of it can satisfy every
clause; patch-level clauses (`!=2.10.1`) exclude nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from flagbot.hooks.limits import MAX_SOURCE_BYTES, read_limited

# A torch requirement (not torchvision, torch_fl, torch-npu) and its specifier list.
_QUOTED = re.compile(r"""["']torch(?![\w.-])\s*((?:[<>=!~]=?|===)[^"';]*)["']""")
_LINE = re.compile(r"^\s*torch(?![\w.-])\s*((?:[<>=!~]=?|===)[^#;\s]*)", re.M)
_CLAUSE = re.compile(r"^(~=|===|==|!=|<=|>=|<|>)\s*([0-9]+(?:\.[0-9]+)*)(\.\*)?$")
FILES = ("pyproject.toml", "setup.py", "setup.cfg")


@dataclass(frozen=True)
class Pin:
    """A declared torch requirement: where it was found and the release lines it admits."""

    source: str  # "pyproject.toml: torch>=2.10,<2.11"
    releases: tuple[str, ...]


def _minor(version: str) -> tuple[int, int]:
    parts = [int(p) for p in version.split(".")]
    return parts[0], parts[1] if len(parts) > 1 else 0


def admits(spec: str, release: str) -> bool:
    """Whether some version of the release line `release` ("2.10") can satisfy `spec`."""
    line = _minor(release)
    for raw in spec.split(","):
        clause = raw.strip()
        if not clause:
            continue
        match = _CLAUSE.match(clause)
        if match is None:
            return True  # an unreadable clause limits nothing we can judge
        op, version, star = match.groups()
        want = _minor(version)
        patch = version.count(".") >= 2 and not star
        if op in ("==", "===") and line != want:
            return False
        if op == "!=" and line == want and not patch:
            return False
        if op == ">=" and line < want:
            return False
        if op == ">" and (line < want or (line == want and not patch)):
            return False
        if op == "<" and (line > want or (line == want and not patch)):
            return False
        if op == "<=" and line > want:
            return False
        if op == "~=":
            upper = (want[0], want[1] + 1) if patch else (want[0] + 1, 0)
            if not want <= line < upper:
                return False
    return True


def _specs(repo: Path) -> list[tuple[str, str]]:
    """(file, specifier) for every torch requirement the packaging files declare."""
    found: list[tuple[str, str]] = []
    candidates = [repo / name for name in FILES]
    candidates += sorted(repo.glob("requirements*.txt")) + sorted(repo.glob("requirements/*.txt"))
    for path in candidates:
        try:
            text = read_limited(path, MAX_SOURCE_BYTES).decode("utf-8", "replace")
        except OSError:
            continue
        pattern = _LINE if path.suffix == ".txt" else _QUOTED
        rel = path.relative_to(repo).as_posix()
        found += [(rel, spec.strip()) for spec in pattern.findall(text)]
    return found


def declared_pin(repo: Path, shipped: tuple[str, ...]) -> Pin | None:
    """The shipped release lines every declared torch requirement admits; None when the
    repository declares none, or when they admit none of the shipped lines (then the caller
    keeps the shipped range: a pin flagbot has no data for says nothing about the others)."""
    specs = _specs(repo)
    if not specs:
        return None
    releases = tuple(r for r in shipped if all(admits(spec, r) for _, spec in specs))
    if not releases:
        return None
    first_file, first_spec = specs[0]
    return Pin(f"{first_file}: torch{first_spec}", releases)
