"""Extracting a tar archive without letting it write outside the folder it goes into: a base
backend's archive from git (`kernels compare`), a sweep's saved parts (benchmarks)."""

from __future__ import annotations

import tarfile
from pathlib import Path


def extract_inside(tar: tarfile.TarFile, dest: Path) -> None:
    """Extract `tar` under `dest` refusing what escapes it (absolute names, `..`, links out,
    devices) with a ValueError naming the member: tarfile's "data" filter where this Python
    has it, the same checks by hand on Pythons without extraction filters (before 3.10.12 /
    3.11.4, e.g. Debian 12's 3.11.2)."""
    if hasattr(tarfile, "data_filter"):
        try:
            tar.extractall(dest, filter="data")
        except tarfile.FilterError as exc:
            raise ValueError(f"the archive cannot be extracted safely: {exc}") from None
        return
    root = dest.resolve()
    for member in tar.getmembers():
        target = (root / member.name).resolve()
        link = target
        if member.issym():  # relative to the link's own folder
            link = (target.parent / member.linkname).resolve()
        elif member.islnk():  # hard links name a member of the archive
            link = (root / member.linkname).resolve()
        inside = all(p == root or root in p.parents for p in (target, link))
        if not inside or not (member.isfile() or member.isdir() or member.issym()
                              or member.islnk()):
            raise ValueError(f"the archive's {member.name!r} would land outside {dest} or is "
                             "not a plain file")
    tar.extractall(dest)  # noqa: S202 - every member checked above
