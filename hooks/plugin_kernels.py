"""Which backends have a kernel for which op, read from a FlagOS PyTorch plugin's C++ sources.

The plugin binds op names to dispatchers (`ADD_IMPL_TO_DISPATCHER(Fn, d, "op")`, or a call
`d.DispatchAs("op", ...)`) and registers kernels per backend
(`REGISTER_IMPL_TO_DISPATCHER(Fn, d, Backend::kCuda, kernel)`). An op routed to a backend whose
kernel was never registered fails at run time with "<op>: backend not registered". Read with
regular expressions over text, never a compiler: the sources need a vendor SDK to build.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

SUFFIXES = (".cc", ".cpp", ".cxx", ".cu", ".h", ".hpp", ".cuh", ".inc", ".mm")
# Folders that hold no plugin sources of their own (build trees, vendored code, environments).
SKIP_DIRS = frozenset({"build", "dist", "third_party", "node_modules", "__pycache__", "venv"})
_MARK = "_TO_DISPATCHER"
_LINE_COMMENT = re.compile(r"//[^\n]*")  # usage examples in comments register nothing
_ADD = re.compile(r"ADD_IMPL_TO_DISPATCHER\(\s*\w+\s*,\s*(\w+)\s*,\s*\"([^\"]+)\"")
_AS = re.compile(r"(\w+)\.DispatchAs\(\s*\"([^\"]+)\"")
_REGISTER = re.compile(r"REGISTER_IMPL_TO_DISPATCHER\w*\(\s*\w+\s*,\s*(\w+)\s*,\s*Backend::(\w+)")


@dataclass
class KernelIndex:
    """Op name -> dispatcher names, and dispatcher -> the Backend enum values with a kernel."""

    ops: dict[str, set[str]] = field(default_factory=dict)
    kernels: dict[str, set[str]] = field(default_factory=dict)

    def backends_for(self, op: str) -> set[str] | None:
        """Enum values (`kCuda`) with a kernel for `op`; None when no dispatcher serves `op`."""
        dispatchers = self.ops.get(op)
        if dispatchers is None:
            return None
        return set().union(*(self.kernels.get(d, set()) for d in dispatchers))


def source_files(repo: Path) -> list[str]:
    """C/C++/CUDA files of the repository, skipping hidden, build and vendored folders."""
    out: list[str] = []
    for directory, subdirs, files in os.walk(repo):
        subdirs[:] = [d for d in subdirs if not d.startswith(".") and d not in SKIP_DIRS]
        out.extend(os.path.join(directory, f) for f in files if f.endswith(SUFFIXES))
    return out


def read_index(repo: Path) -> KernelIndex | None:
    """The index of the plugin sources under `repo`; None when no file binds an op."""
    index = KernelIndex()
    for path in source_files(repo):
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError:
            continue
        if _MARK not in text and "DispatchAs" not in text:
            continue
        text = _LINE_COMMENT.sub("", text)
        calls = _AS.findall(text) if ".DispatchAs(" in text else []
        for dispatcher, op in _ADD.findall(text) + calls:
            index.ops.setdefault(op, set()).add(dispatcher)
        for dispatcher, backend in _REGISTER.findall(text):
            index.kernels.setdefault(dispatcher, set()).add(backend)
    return index if index.ops else None
