"""What a record would read with this tree's kernels, from an A/B already timed: each row whose
launches this tree changes takes the readings of the A/B head that launched it the same way.

Run (any machine, CPU only, repository root, flagbot installed from it):
  python benchmarks/ab_project.py DIR [DIR...] --results FILE [--ops mm] [--launches F]
DIR is an `ab_rows.py --changed --out DIR` folder: base-N.json and HEAD-N.json (the rounds),
launches-base.json and launches-HEAD.json (each variant's launches, captured on the CPU); or
an archive of one (a gzipped JSON file with "rounds" and "launches", each name -> content, as
`ab_archive.py` writes them and benchmarks/results/ab-*.json.gz keep them).
FILE is the record the first A/B's base tree measured. This tree's launches for FILE's rows of
`--ops` are captured the same way (`ptx_audit.py --launches`, or read from `--launches F`).
Later A/Bs may have run on a base that already merged an earlier one's rules: their heads and
their bases count as variants that timed the rows they launched.

A row whose launches equal the A/B base's keeps the record's reading. A row this tree
launches differently takes the best round of a head that launched it exactly so (the rules
merged from several heads, or narrowed, pick among launches already timed). A row no head
launched that way has no reading: it is listed and the exit status is 1, since the
projection would otherwise count a row nobody timed. Prints per op and sweep the rows at the
target (>= 0.95x torch, launch-inclusive and device time) and under 0.80x, record ->
projected, and each changed row. A projection, not a measurement: the record is the judge.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ab_archive  # noqa: E402 - the benchmark's own folder, found by path
import ab_rows  # noqa: E402
import bench_kernels  # noqa: E402
import ptx_audit  # noqa: E402
import sweep_pool  # noqa: E402

FLOOR = 0.80  # the floor: no row under this many times torch
Launches = dict[str, dict[str, list[dict[str, Any]]]]  # variant -> row -> launch specs
Rounds = dict[str, list[dict[str, Any]]]  # variant -> its rounds' results


def load(ab: Path) -> tuple[Launches, Rounds]:
    """An A/B's launches and rounds per variant (base, head or head1, head2, ...), from the
    folder ab_rows.py left or from its archive."""
    if ab.is_file():
        kept = sweep_pool.read_result(ab)
        if not isinstance(kept.get("rounds"), dict) or not isinstance(kept.get("launches"), dict):
            raise SystemExit(f"ab_project: {ab} is not an A/B archive (it needs \"rounds\" and "
                             "\"launches\")")
    else:
        kept = ab_archive.read_folder(ab)
    launches = {name: ab_rows.launch_specs(made) for name, made in kept["launches"].items()}
    named = [(name, run) for name, run in sorted(kept["rounds"].items())
             if ab_archive.ROUND.fullmatch(name)]
    if "base" not in launches or not any(name.startswith("head") for name in launches):
        raise SystemExit(f"ab_project: {ab} lacks launches-base.json or launches-HEAD.json "
                         "(ab_rows.py --changed writes them)")
    rounds: Rounds = {}
    for name, run in named:
        rounds.setdefault(name.rsplit("-", 1)[0], []).append(run)
    return launches, rounds


def readings(abs_: Path | list[Path], here: dict[str, list[dict[str, Any]]]
             ) -> tuple[dict[str, tuple[str, dict[str, Any]]], list[str]]:
    """(row -> (variant, its best reading) for each row `here` launches unlike the record's
    tree, the first A/B's base (for rows it did not capture, the first later base that did);
    the changed rows no variant launched the same way). Each A/B's heads are variants, and so
    are the bases of the A/Bs after the first."""
    abs_ = [abs_] if isinstance(abs_, Path) else abs_
    trees: Launches = {"here": here}
    timed: dict[str, list[dict[str, Any]]] = {}
    for i, ab in enumerate(abs_):
        launches, rounds = load(ab)
        for name in sorted(launches):
            if name == "base":
                # rows of an op the first A/B left out: as the first later base launched them
                trees["record"] = {**launches[name], **trees.get("record", {})}
                if i == 0:
                    continue
            label = name if len(abs_) == 1 else f"{ab.name}: {name}"
            trees[label], timed[label] = launches[name], rounds.get(name, [])
    seen = ab_rows.comparable(trees)
    changed = {row for row, made in seen["here"].items() if seen["record"].get(row) != made}
    found: dict[str, tuple[str, dict[str, Any]]] = {}
    unmatched = []
    for row in sorted(changed):
        same = [v for v in timed if seen[v].get(row) == seen["here"][row]]
        best = {v: ab_rows.best_of(timed[v], {row}).get(row) for v in same}
        readings_ = [(r["us"]["generic"], v, r) for v, r in best.items() if r is not None]
        if readings_:
            _, variant, reading = min(readings_, key=lambda t: t[0])
            found[row] = (variant, reading)
        else:
            unmatched.append(row)
    return found, unmatched


def tally(rows: list[dict[str, Any]]) -> tuple[int, int, int]:
    """(at the target launch-inclusive, at it in device time, under FLOOR x torch)."""
    return (sum(bench_kernels.passes(r, "vs_torch") for r in rows),
            sum(bench_kernels.passes(r, "device_vs_torch") for r in rows),
            sum(r.get("vs_torch", 1.0) < FLOOR for r in rows))


def project(record: dict[str, Any], ops: list[str],
            found: dict[str, tuple[str, dict[str, Any]]]) -> str:
    """The Markdown report: per op and sweep, record -> projected; then each changed row."""
    lines = ["| op | sweep | rows | at target: record -> projected | device time | "
             f"under {FLOOR:.2f}x |", "| --- | --- | --- | --- | --- | --- |"]
    moved = []
    sweeps = [("fixed", record.get("rows", []))] + [
        (f"seed {s['seed']}", s["rows"]) for s in record.get("random", [])]
    for op in ops:
        for name, rows in sweeps:
            mine = [r for r in rows if r["op"] == op and "us" in r]
            if not mine:
                continue
            after = []
            for r in mine:
                head = found.get(ptx_audit.row_name(r))
                if head is None:
                    after.append(r)
                    continue
                h = head[1]
                after.append({**r, **{k: h[k] for k in ("vs_torch", "device_vs_torch", "us",
                                                        "device_us") if k in h}})
                moved.append(f"| {op} | {name} | {bench_kernels._shape_of(r)} | {head[0]} | "
                             f"{r['vs_torch']:.2f} -> {h['vs_torch']:.2f} | "
                             f"{r['device_vs_torch']:.2f} -> {h['device_vs_torch']:.2f} |")
            (b_lt, b_dev, b_low), (a_lt, a_dev, a_low) = tally(mine), tally(after)
            lines.append(f"| {op} | {name} | {len(mine)} | {b_lt} -> {a_lt} | {b_dev} -> "
                         f"{a_dev} | {b_low} -> {a_low} |")
    if moved:
        lines += ["", "| op | sweep | shape | head | x torch | device x torch |",
                  "| --- | --- | --- | --- | --- | --- |", *moved]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("ab_dirs", type=Path, nargs="+", metavar="DIR",
                   help="an ab_rows.py --changed --out DIR, or its archive; the first A/B's "
                   "base is the record's tree")
    p.add_argument("--results", type=Path, required=True,
                   help="the record the A/B's base tree measured (JSON or gzipped)")
    p.add_argument("--ops", default="mm")
    p.add_argument("--launches", type=Path,
                   help="this tree's launches, already captured (ptx_audit.py --launches)")
    args = p.parse_args(argv)
    for path in (args.results, args.launches):
        if path is not None and not path.is_file():
            p.error(f"{path}: no such file")
    for ab in args.ab_dirs:
        if not ab.exists():
            p.error(f"{ab}: no such folder or archive")
    ops = [o for o in args.ops.split(",") if o]
    if args.launches is None:
        with tempfile.TemporaryDirectory() as tmp:
            target = Path(tmp).resolve() / "launches-here.json"
            ab_rows.capture_launches(args.results, ops, target, None, "ab_project")
            here = ab_rows.launch_specs(json.loads(target.read_text(encoding="utf-8")))
    else:
        here = ab_rows.launch_specs(json.loads(args.launches.read_text(encoding="utf-8")))
    found, unmatched = readings(args.ab_dirs, here)
    record = sweep_pool.read_result(args.results)
    print(project(record, ops, found))
    print(f"ab_project: {len(found)} rows launched differently, each timed by a variant",
          file=sys.stderr)
    if unmatched:
        print(f"ab_project: {len(unmatched)} rows launched differently that no variant of "
              f"{', '.join(map(str, args.ab_dirs))} launched the same way, so not projected "
              "(time them): "
              + ", ".join(unmatched), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
