"""Forget the rows of a sweep's saved parts that a later change of the kernels measures
differently, so that `bench_kernels.py --resume` (or `device_sweep.sh start ... --resume`)
measures just those rows again with the tree as it is now.

Run (here or on the device machine, repository root, flagbot installed from it):
    python benchmarks/sweep_forget.py PARTS.tgz PATCH [--ops mm,layer_norm] [--dry-run]
PARTS.tgz is what device_sweep.sh saves (`sweep.parts/<stage>-part-<i>.json`); PATCH is a
unified diff from the tree this checkout is to the tree the parts were measured with (`git
diff HEAD <the sweep's commit> > back.patch`): the rows whose kernel launches differ between
the two (`ab_rows.changed_rows`, found on the CPU) are dropped from every part, and each
stage that lost rows is marked incomplete. The archive is rewritten in place (the old one kept
beside it as PARTS.tgz.bak); `--dry-run` only lists the rows. `--from RESULT` first writes
PARTS.tgz from a merged result instead (one kept under benchmarks/results, gzipped or not):
one part per stage, complete unless the result lists the stage as `incomplete` (saved from a
run cut short), so that a record can be resumed after its parts are gone.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ab_rows  # noqa: E402 - the benchmark's own folder, found by path
import ptx_audit  # noqa: E402
import sweep_pool  # noqa: E402

from flagbot.kernels.safe_tar import extract_inside  # noqa: E402


def unpack(archive: Path, into: Path) -> None:
    """Extract a parts archive under `into`; a member that would land outside it is refused
    (ValueError)."""
    with tarfile.open(archive) as tar:
        extract_inside(tar, into)


def forget(parts: Path, names: set[str]) -> dict[str, int]:
    """Drop the rows named `op case dtype layout` from every part file in the folder `parts`;
    {part file name: rows dropped} for the parts that lost any (those are marked incomplete)."""
    dropped: dict[str, int] = {}
    for path in sorted(parts.glob("*-part-*.json")):
        part = json.loads(path.read_text(encoding="utf-8"))
        before = len(part["rows"]) + sum(len(s["rows"]) for s in part["random"])
        part["rows"] = [r for r in part["rows"] if ptx_audit.row_name(r) not in names]
        for sweep in part["random"]:
            sweep["rows"] = [r for r in sweep["rows"] if ptx_audit.row_name(r) not in names]
        lost = before - len(part["rows"]) - sum(len(s["rows"]) for s in part["random"])
        if lost:
            part["complete"] = False
            path.write_text(json.dumps(part), encoding="utf-8")
            dropped[path.name] = lost
    return dropped


def parts_of(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """{stage name: part} for a merged result, as one device's timing process writes them: the
    fixed sweep and each random sweep, complete unless the result names the stage among its
    `incomplete` ones (a run cut short: a resumed run measures the rows it lacks; the rows
    that ended in errors of a complete stage it measures again too)."""
    if not isinstance(result.get("rows"), list) or not isinstance(result.get("random"), list):
        raise ValueError("no list of rows and of random sweeps")
    cut_short = set(result.get("incomplete", []))
    meta = {k: v for k, v in result.items()
            if k not in ("rows", "random", "devices", "incomplete")}
    meta["shard"] = "0/1"
    parts = {}
    if result["rows"]:
        parts["fixed"] = {**meta, "complete": "fixed" not in cut_short, "rows": result["rows"],
                          "random": []}
    for sweep in result.get("random", []):
        name = f"seed-{sweep['seed']}"
        parts[name] = {**meta, "complete": name not in cut_short, "rows": [], "random": [
            {"seed": sweep["seed"], "count": sweep["count"], "rows": sweep["rows"]}]}
    return parts


def write_parts(result: dict[str, Any], archive: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "sweep.parts"
        folder.mkdir()
        for name, part in parts_of(result).items():
            sweep_pool.write_json(folder / f"{name}-part-0.json", part)
        with tarfile.open(archive, "w:gz") as tar:
            tar.add(folder, arcname="sweep.parts")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("archive", type=Path)
    p.add_argument("patch", type=Path)
    p.add_argument("--ops", default=",".join(ptx_audit.AUDITED))
    p.add_argument("--dry-run", action="store_true")
    p.add_argument("--from", dest="result", type=Path,
                   help="write ARCHIVE from this merged result first (ARCHIVE must not exist)")
    p.add_argument("--row", action="append", default=[], metavar="'OP CASE DTYPE LAYOUT'",
                   help="forget this row too, whatever its launches (a reading known to be "
                        "disturbed, a host path the patch changed); repeatable")
    args = p.parse_args(argv)
    if args.result is not None:
        if args.archive.exists():
            p.error(f"{args.archive} exists: remove it, or leave out --from to use it")
        try:
            write_parts(sweep_pool.read_result(args.result), args.archive)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            p.error(f"{args.result}: not a bench_kernels result ({exc})")
        print(f"sweep_forget: {args.archive} written from {args.result}", file=sys.stderr)
    for path in (args.archive, args.patch):
        if not path.is_file():
            p.error(f"{path}: no such file")
    ops = [o for o in args.ops.split(",") if o]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        try:
            unpack(args.archive, work)
        except (tarfile.TarError, OSError, ValueError) as exc:
            p.error(f"{args.archive}: not a readable parts archive ({exc})")
        parts = work / "sweep.parts"
        merged = sweep_pool.merge(sorted(parts.glob("*-part-*.json")))
        if merged is None:
            p.error(f"{args.archive}: no sweep.parts/*-part-*.json inside")
        known = {ptx_audit.row_name(r) for r in merged["rows"]} | {
            ptx_audit.row_name(r) for sweep in merged["random"] for r in sweep["rows"]}
        unknown = sorted(set(args.row) - known)
        if unknown:
            p.error(f"--row: no such row in {args.archive}: {'; '.join(unknown)}")
        results = work / "merged.json"
        results.write_text(json.dumps(merged), encoding="utf-8")
        if args.patch.read_text(encoding="utf-8").strip():
            site = ab_rows.build_head(args.patch, work / "head")
            names = ab_rows.changed_rows(results, ops, work, site)
        else:  # an empty patch: no tree launches differently (--from, --row alone)
            names = set()
        print(f"sweep_forget: {len(names)} rows launch differently in the two trees",
              file=sys.stderr)
        names |= set(args.row)
        for name in sorted(names):
            print(name)
        if args.dry_run or not names:
            return 0
        dropped = forget(parts, names)
        shutil.copy(args.archive, args.archive.with_name(args.archive.name + ".bak"))
        with tarfile.open(args.archive, "w:gz") as tar:
            tar.add(parts, arcname="sweep.parts")
        for name, count in dropped.items():
            print(f"sweep_forget: {name}: {count} rows dropped, marked incomplete",
                  file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
