"""Triton's compile cache carried from one lent machine to the next as one archive.

A lent machine starts bare, and a sweep's warm-up pass is mostly compiling: on one H200
(2026-11-27) seed 2065737070's 2,200 rows took 500 s of warm-up on 16 processes with an empty
cache and 400 s of timing, while the next seed's warm-up on the same machine, its cache full,
got through 100 rows a process in 25-160 s instead of 170-320. The next machine runs the same
image (the same Triton, the same ptxas), so the kernels it would compile have the same cache
keys; only the kernels a change touched compile again.

    python benchmarks/triton_cache.py pack ARCHIVE [--cache DIR] [--max-mb N]
    python benchmarks/triton_cache.py unpack ARCHIVE [--cache DIR]

Per kernel the archive keeps what loading it needs: the binary and the metadata, and a group
file naming just those (Triton takes a cached kernel only when every file its group names
exists); the text IR beside them (Triton's own, LLVM's, PTX) is for people reading it and makes
up most of the cache. Kernels go in newest first until --max-mb of them, so that the archive
stays within what a lent machine returns. DIR defaults to $TRITON_CACHE_DIR, else
~/.triton/cache, as Triton's.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tarfile
from pathlib import Path

IR_SUFFIXES = {".ttir", ".ttgir", ".llir", ".ptx", ".amdgcn", ".source"}
GROUP_PREFIX = "__grp__"


def default_cache() -> Path:
    return Path(os.environ.get("TRITON_CACHE_DIR") or Path.home() / ".triton" / "cache")


def _kernels(cache: Path) -> list[tuple[float, Path, dict[str, str]]]:
    """(modified time, group file, {file name: path}) for each cached kernel whose files are
    all there, binary and metadata only."""
    found = []
    for group in cache.glob(f"*/{GROUP_PREFIX}*.json"):
        try:
            children = json.loads(group.read_text(encoding="utf-8"))["child_paths"]
        except (OSError, ValueError, KeyError, TypeError):
            continue  # being written, or not Triton's
        kept = {name: Path(path) for name, path in children.items()
                if Path(name).suffix not in IR_SUFFIXES}
        # the files sit beside their group file; a path elsewhere is not this cache's
        if not kept or any(p.parent != group.parent or not p.is_file() for p in kept.values()):
            continue
        found.append((group.stat().st_mtime, group, {n: str(p) for n, p in kept.items()}))
    return sorted(found, key=lambda f: f[0], reverse=True)


def pack(cache: Path, archive: Path, max_bytes: int) -> tuple[int, int]:
    """Write the newest cached kernels under `cache` to `archive` (tar.gz) up to `max_bytes`
    of files before compression; (kernels packed, kernels left out)."""
    packed = left = 0
    total = 0
    archive.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive, "w:gz") as tar:
        for mtime, group, children in _kernels(cache):
            size = sum(Path(p).stat().st_size for p in children.values())
            if total + size > max_bytes:
                left += 1
                continue
            total += size
            folder = group.parent.name
            for path in children.values():
                tar.add(path, arcname=f"{folder}/{Path(path).name}")
            # names relative to the cache: unpack makes them absolute where it lands
            text = json.dumps({"child_paths": {n: f"{folder}/{Path(p).name}"
                                               for n, p in children.items()}}).encode()
            info = tarfile.TarInfo(f"{folder}/{group.name}")
            info.size = len(text)
            info.mtime = int(mtime)
            tar.addfile(info, io.BytesIO(text))
            packed += 1
    return packed, left


def unpack(archive: Path, cache: Path) -> int:
    """Extract `archive` into `cache` (refusing members that would land outside it) and point
    its group files at their files there; kernels unpacked."""
    from flagbot.kernels.safe_tar import extract_inside  # pack runs without the project

    cache.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive, "r:gz") as tar:
        names = [m.name for m in tar.getmembers()]
        extract_inside(tar, cache)
    count = 0
    root = cache.resolve()
    for name in names:
        if not Path(name).name.startswith(GROUP_PREFIX):
            continue
        group = root / name
        children = json.loads(group.read_text(encoding="utf-8"))["child_paths"]
        absolute = {n: str(root / rel) for n, rel in children.items()}
        if all((root / rel).resolve().parent == group.parent for rel in children.values()):
            group.write_text(json.dumps({"child_paths": absolute}), encoding="utf-8")
            count += 1
        else:
            group.unlink()  # names files outside its own folder: not one this tool wrote
    return count


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("action", choices=("pack", "unpack"))
    p.add_argument("archive", type=Path)
    p.add_argument("--cache", type=Path, default=None)
    p.add_argument("--max-mb", type=float, default=40.0,
                   help="files before compression (pack; default 40, about a third of that "
                        "compressed: within the 16 MiB a lent machine returns a file)")
    args = p.parse_args(argv)
    cache = args.cache or default_cache()
    if args.action == "pack":
        if not cache.is_dir():
            print(f"triton_cache: no cache at {cache}: nothing to pack", file=sys.stderr)
            return 1
        packed, left = pack(cache, args.archive, int(args.max_mb * (1 << 20)))
        print(f"triton_cache: {packed} kernels packed into {args.archive} "
              f"({args.archive.stat().st_size / (1 << 20):.1f} MiB)"
              + (f"; {left} older ones left out (--max-mb)" if left else ""), file=sys.stderr)
        return 0
    if not args.archive.is_file():
        print(f"triton_cache: no archive at {args.archive}", file=sys.stderr)
        return 1
    try:
        count = unpack(args.archive, cache)
    except (tarfile.TarError, ValueError, KeyError, TypeError, OSError) as exc:
        print(f"triton_cache: {args.archive} could not be unpacked ({exc}); the sweep compiles "
              "from scratch", file=sys.stderr)
        return 1
    print(f"triton_cache: {count} kernels unpacked into {cache}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
