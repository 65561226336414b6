"""Head vs base on one device: the same bench_kernels rows timed with the tree as it is and with
a patch applied, alternately, so that both see the same card, host and hour.

Run (device machine, repository root, flagbot installed from it):
  python benchmarks/ab_rows.py PATCH [PATCH...] --results FILE [--ops add,mul] [--below 0.95]
      [--guards 20] [--also CASE,...] [--changed] [--rounds 2] [--out DIR]
      [--dry-run | --again]
      [-- BENCH_KERNELS ARGS...]
PATCH is a unified diff against this tree (`git diff main BRANCH > x.patch`). Several patches
are several heads, each its own patched copy, all timed in every round beside the one base
(one machine start and one base timing for several candidate changes): files and reports are
then named head1, head2, ... in the order given (one patch: head). The rows: those
of FILE (a bench_kernels result, JSON or gzipped) for `--ops` under `--below` times torch
(launch-inclusive or device time), plus `--guards` passing rows per op drawn evenly across
the rest (what a change must not slow down), plus the rows of the cases named in `--also`,
plus with `--changed` every row whose kernel launches a patch changes (ptx_audit.py
--launches in both trees: the launches the rules pick, found on the CPU).
bench_kernels re-times their cases
(`--cases`, the file's seeds), base and head in turn for `--rounds` rounds, FlagGems left out;
per row and variant the lowest reading of the rounds is kept (a disturbance only adds time).
Rows are matched by what they measure (op, case, dtype, layout), not by key.
Writes DIR/base-N.json and DIR/HEAD-N.json per round and DIR/ab.json (several heads:
DIR/ab-HEAD.json each; `--again` compares the rounds already in DIR, on any machine, without
building the head trees: with `--changed` it reads the launches DIR/launches-base.json and
DIR/launches-HEAD.json the timed run wrote, so a patch since merged into this tree can still
be judged); prints per head and op how many
rows meet the target (>= 0.95x torch) in base and head, the rows that moved by over 5%, and
every row a variant failed to compute right (an error, an inaccurate result, or no reading);
exits 1 where a patched tree failed any.

A head tree (DIR/HEAD/tree) is a copy of this one with the patch applied, imported through a
folder that maps `flagbot.kernels` (and hooks, bot) to it, placed first on PYTHONPATH; nothing
is installed, and the base tree is never modified.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_kernels  # noqa: E402 - the benchmark's own folder, found by path
import ptx_audit  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("kernels", "hooks", "bot")  # flagbot.<name> is the checkout's <name>/
SKIP = {".git", ".venv", ".tox", ".whl", ".dev-sweep", "out", "__pycache__", ".mypy_cache",
        ".ruff_cache", ".pytest_cache", "results"}
MOVED = 0.05  # a row's generic time changed by more than this fraction is listed


def build_head(patch: Path, dest: Path, root: Path = ROOT) -> Path:
    """A copy of `root` at dest/tree with `patch` applied, and dest/site whose `flagbot` maps
    to it; returns dest/site (to go first on PYTHONPATH). Exits with the patch tool's message
    where the patch does not apply."""
    tree, site = dest / "tree", dest / "site"
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(root, tree, ignore=lambda _, names: [n for n in names if n in SKIP])
    tool = (["git", "apply", "--whitespace=nowarn"] if shutil.which("git")
            else ["patch", "-p1", "--batch", "--forward", "-i"])
    applied = subprocess.run([*tool, str(patch.resolve())], cwd=tree, capture_output=True,
                             text=True, check=False)
    if applied.returncode != 0:
        raise SystemExit(f"ab_rows: {patch} does not apply to this tree: "
                         f"{(applied.stderr or applied.stdout).strip()} (make it with `git diff <this commit> "
                         "<branch>`)")
    (site / "flagbot").mkdir(parents=True)
    shutil.copy(tree / "flagbot" / "__init__.py", site / "flagbot" / "__init__.py")
    for name in PACKAGES:
        (site / "flagbot" / name).symlink_to(tree / name, target_is_directory=True)
    return site


def pick_rows(rows: list[dict[str, Any]], ops: list[str], below: float,
              guards: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(`ops`' rows under `below` times torch, launch-inclusive or device; per op `guards` of
    the others, evenly spaced in result order)."""
    slow: list[dict[str, Any]] = []
    kept: list[dict[str, Any]] = []
    for op in ops:
        mine = [r for r in rows if r["op"] == op and "us" in r]
        under = [r for r in mine
                 if min(r.get("vs_torch") or 9.0, r.get("device_vs_torch") or 9.0) < below]
        slow_ids = {row_id(r) for r in under}
        rest = [r for r in mine if row_id(r) not in slow_ids]
        step = max(1, len(rest) // max(1, guards))
        slow += under
        kept += rest[::step][:guards]
    return slow, kept


def bench_args(result: dict[str, Any], chosen: list[dict[str, Any]], ops: list[str]) -> list[str]:
    """bench_kernels arguments that re-time `chosen` under their keys."""
    cases = sorted({r["case"] for r in chosen})
    sweeps = result.get("random", [])
    kinds = (["fixed"] if any(r["key"].startswith("fixed:") for r in chosen) else []) + (
        [f"random:{sweeps[0]['count']}"] if sweeps else [])
    args = ["--ops", ",".join(ops), "--cases", ",".join(cases), "--shapes", ",".join(kinds),
            "--no-flaggems"]
    if sweeps:
        args += ["--seed", ",".join(str(s["seed"]) for s in sweeps)]
    return args


def row_id(r: dict[str, Any]) -> str:
    """What a row measures (op, case, dtype, layout). Not its key: a key numbers the rows of the
    sweep that produced it, and a sweep cut down with --cases numbers them afresh."""
    return f"{r['op']} {bench_kernels._shape_of(r)}"


def best_of(runs: list[dict[str, Any]], ids: set[str]) -> dict[str, dict[str, Any]]:
    """Per row id among `ids`, the row of the run whose generic launch-inclusive time is
    lowest."""
    best: dict[str, dict[str, Any]] = {}
    for run in runs:
        for r in bench_kernels.sweep_pool.all_rows(run):
            rid = row_id(r)
            if rid in ids and "us" in r and (
                    rid not in best or r["us"]["generic"] < best[rid]["us"]["generic"]):
                best[rid] = r
    return best


def broken(runs: list[dict[str, Any]], ids: set[str]) -> dict[str, str]:
    """Per row id among `ids`: what went wrong in some run (an error, or an inaccurate result),
    for rows that a variant did not compute right at least once."""
    out: dict[str, str] = {}
    for run in runs:
        for r in bench_kernels.sweep_pool.all_rows(run):
            if row_id(r) in ids and ("error" in r or r.get("accuracy", "ok") != "ok"):
                out[row_id(r)] = str(r.get("error") or r["accuracy"])[:200]
    return out


def compare(base: dict[str, dict[str, Any]], head: dict[str, dict[str, Any]],
            failed: dict[str, dict[str, str]] | None = None) -> dict[str, Any]:
    """Per op rows meeting the target in base and head (launch-inclusive and device), the
    rows whose generic time moved by over MOVED either way, and the rows a variant failed
    (`failed`: per variant, key -> what went wrong; a row missing from one side counts)."""
    ops: dict[str, dict[str, int]] = {}
    moved = []
    failures = {name: dict(bad) for name, bad in (failed or {}).items()}
    for name, mine, other in (("base", base, head), ("head", head, base)):
        for key in set(other) - set(mine):
            failures.setdefault(name, {}).setdefault(key, "not measured")
    for key in sorted(set(base) & set(head), key=lambda k: (base[k]["op"], k)):
        b, h = base[key], head[key]
        tally = ops.setdefault(b["op"], {"rows": 0, "base": 0, "head": 0, "base_device": 0,
                                          "head_device": 0})
        tally["rows"] += 1
        tally["base"] += bench_kernels.passes(b, "vs_torch")
        tally["head"] += bench_kernels.passes(h, "vs_torch")
        tally["base_device"] += bench_kernels.passes(b, "device_vs_torch")
        tally["head_device"] += bench_kernels.passes(h, "device_vs_torch")
        ratio = b["device_us"]["generic"] / h["device_us"]["generic"]
        if abs(ratio - 1) > MOVED:
            moved.append({"key": key, "op": b["op"], "shape": bench_kernels._shape_of(b),
                          "base_vs_torch": b["vs_torch"], "head_vs_torch": h["vs_torch"],
                          "base_device_vs_torch": b["device_vs_torch"],
                          "head_device_vs_torch": h["device_vs_torch"],
                          "speedup": round(ratio, 3)})
    return {"ops": ops, "moved": moved, "failed": failures}


def report(ab: dict[str, Any]) -> str:
    lines = ["| op | rows | base at >= 0.95x torch | head | base, device time | head, device "
             "time |", "| --- | --- | --- | --- | --- | --- |"]
    for op, t in ab["ops"].items():
        lines.append(f"| {op} | {t['rows']} | {t['base']} | {t['head']} | {t['base_device']} | "
                     f"{t['head_device']} |")
    lines += ["", "| op | shape | x torch base -> head | device base -> head | head speed-up |",
              "| --- | --- | --- | --- | --- |"]
    for m in sorted(ab["moved"], key=lambda m: m["speedup"]):
        lines.append(f"| {m['op']} | {m['shape']} | {m['base_vs_torch']:.2f} -> "
                     f"{m['head_vs_torch']:.2f} | {m['base_device_vs_torch']:.2f} -> "
                     f"{m['head_device_vs_torch']:.2f} | {m['speedup']:.2f}x |")
    for name, bad in ab.get("failed", {}).items():
        if bad:
            lines += ["", f"**{name} failed {len(bad)} row(s):**"]
            lines += [f"- {key}: {what}" for key, what in sorted(bad.items())]
    return "\n".join(lines) + "\n"


def variant_env(site: Path | None) -> dict[str, str]:
    """The environment a variant's scripts run in: the head's site folder first on the path."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    if site is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    return env


def changed_rows(results: Path, ops: list[str], out: Path, site: Path | None,
                 name: str = "head", base_captured: bool = False) -> set[str]:
    """The rows (`op case dtype layout`) of `ops` in `results` whose kernel launches differ
    between this tree and the head tree `name` (ptx_audit's capture: CPU only, nothing compiled;
    `base_captured`: this tree's launches are already in `out`, from another head):
    another kernel, tile, warps, stages or specialisation. A constant only one tree's kernel
    takes is left out of the comparison, as is an argument only one tree's kernel takes: a
    parameter the patch adds to a kernel (a bound it states, a buffer it writes) would
    otherwise mark every row of that kernel, whatever the rules pick. `site`
    None: the launches an earlier run wrote to `out` (nothing captured again)."""
    launches = {}
    for variant, env_site in (("base", None), (name, site)):
        target = (out / f"launches-{variant}.json").resolve()
        if site is not None and not (variant == "base" and base_captured):
            capture_launches(results, ops, target, env_site,
                             f"ab_rows: --changed: in the {variant} tree")
        elif not target.exists():
            raise SystemExit(f"ab_rows: --again --changed: {target} is missing (the timed run "
                             "writes it; copy it back with the rounds)")
        launches[variant] = launch_specs(json.loads(target.read_text(encoding="utf-8")))
    seen = comparable(launches)
    return {row for row, made in seen["base"].items() if seen[name].get(row, []) != made}


def capture_launches(results: Path, ops: list[str], target: Path, site: Path | None,
                     who: str) -> None:
    """ptx_audit's launches (CPU only) for the rows of `ops` in `results`, written to the
    absolute path `target`: this tree's (`site` None) or the head tree's whose site folder is
    `site`; `who` opens the message if ptx_audit fails."""
    tree = ROOT if site is None else site.parent / "tree"
    # run from the variant's own tree: a `flagbot/` in the working directory would shadow the
    # site folder
    done = subprocess.run([sys.executable, str(tree / "benchmarks" / "ptx_audit.py"),
                           "--results", str(results.resolve()), "--ops", ",".join(ops),
                           "--launches", str(target)],
                          env=variant_env(site), cwd=tree, check=False)
    if done.returncode != 0 or not target.exists():
        raise SystemExit(f"{who}: ptx_audit exited {done.returncode} (its messages are above)")


def launch_specs(kept: dict[str, list[str]]) -> dict[str, list[dict[str, Any]]]:
    """A launches file's content (row -> each launch as ptx_audit's JSON string), parsed."""
    return {row: [json.loads(k) for k in keys] for row, keys in kept.items()}


def comparable(launches: dict[str, dict[str, list[dict[str, Any]]]]
               ) -> dict[str, dict[str, list[str]]]:
    """Per tree (name -> row -> the launch specs ptx_audit captured), each row's launches as
    sorted JSON strings that compare equal where the trees launch the same: a constant or an
    argument (its type, its divisibility) that not every tree's kernel of that name takes is
    left out."""
    named = [{(s["kernel"], c) for made in tree.values() for s in made
              for c in [*s["constexprs"], *s.get("types", {}), *s.get("divisible", [])]}
             for tree in launches.values()]
    shared = set.intersection(*named) if named else set()

    def kept(s: dict[str, Any], name: str) -> bool:
        return (s["kernel"], name) in shared

    def choice(made: list[dict[str, Any]]) -> list[str]:
        return sorted(json.dumps({**s, "constexprs": {c: v for c, v in s["constexprs"].items()
                                                      if kept(s, c)},
                                  "types": {a: t for a, t in s.get("types", {}).items()
                                            if kept(s, a)},
                                  "divisible": [a for a in s.get("divisible", [])
                                                if kept(s, a)]},
                                 sort_keys=True) for s in made)

    return {tree: {row: choice(made) for row, made in rows.items()}
            for tree, rows in launches.items()}


def run_variant(name: str, extra: list[str], out: Path, site: Path | None,
                bench: Path) -> dict[str, Any]:
    env = variant_env(site)
    target = out / f"{name}.json"
    # run from the variant's own tree: a `flagbot/` in the working directory would shadow the
    # site folder for anything run with -c or -m
    done = subprocess.run([sys.executable, str(bench), *extra, "--json", str(target.resolve())],
                          env=env, cwd=bench.parent.parent, check=False)
    # bench_kernels exits 1 when rows miss the target, which is what is being compared here;
    # only a sweep that broke off is a failure
    result = json.loads(target.read_text(encoding="utf-8")) if target.exists() else {}
    if done.returncode not in (0, 1) or not result:
        raise SystemExit(f"ab_rows: bench_kernels for {name} exited {done.returncode} (its "
                         "messages are above); nothing compared")
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("patches", type=Path, nargs="+", metavar="PATCH",
                   help="one head per patch, all timed beside one base")
    p.add_argument("--results", type=Path, required=True)
    p.add_argument("--ops", default="add,mul,gelu,silu")
    p.add_argument("--below", type=float, default=0.95)
    p.add_argument("--guards", type=int, default=20)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--also", default="",
                   help="comma-separated cases of FILE re-timed as guards too (rows a change "
                        "touches that neither the slow rows nor the drawn guards include)")
    p.add_argument("--changed", action="store_true",
                   help="re-time as guards too every row of --ops whose kernel launches the "
                        "patch changes (found on the CPU, nothing compiled)")
    p.add_argument("--out", type=Path, default=Path("out"))
    p.add_argument("--dry-run", action="store_true",
                   help="build the head tree and print the bench_kernels arguments only")
    p.add_argument("--again", action="store_true",
                   help="time nothing: compare the base-N.json and HEAD-N.json already in --out")
    args, passthrough = p.parse_known_args(argv)
    passthrough = [a for a in passthrough if a != "--"]
    for path in (*args.patches, args.results):
        if not path.is_file():
            p.error(f"{path}: no such file")
    heads = (["head"] if len(args.patches) == 1
             else [f"head{i}" for i in range(1, len(args.patches) + 1)])
    ops = [o for o in args.ops.split(",") if o]
    result = bench_kernels.sweep_pool.read_result(args.results)
    rows = bench_kernels.sweep_pool.all_rows(result)
    slow, guards = pick_rows(rows, ops, args.below, args.guards)
    also = {c for c in args.also.split(",") if c}
    picked = {row_id(r) for r in slow + guards}
    named = [r for r in rows
             if r["op"] in ops and r["case"] in also and "us" in r and row_id(r) not in picked]
    missing = also - {r["case"] for r in slow + guards + named if r["op"] in ops}
    if missing:
        p.error(f"--also: no rows of {args.ops} with case {', '.join(sorted(missing))} in "
                f"{args.results}")
    guards += list({row_id(r): r for r in named}.values())
    args.out.mkdir(parents=True, exist_ok=True)
    # --again times nothing, so it needs no head tree (its patch may be merged here by now)
    sites = {name: None if args.again else build_head(patch, args.out / name)
             for name, patch in zip(heads, args.patches, strict=True)}
    if args.changed:
        changed: set[str] = set()
        for i, (name, site) in enumerate(sites.items()):
            found = changed_rows(args.results, ops, args.out, site, name, base_captured=i > 0)
            if len(heads) > 1:
                print(f"ab_rows: {name} ({args.patches[i]}) changes the launches of "
                      f"{len(found)} rows", file=sys.stderr)
            changed |= found
        picked = {row_id(r) for r in slow + guards}
        moved = [r for r in rows if r["op"] in ops and "us" in r and row_id(r) not in picked
                 and ptx_audit.row_name(r) in changed]
        guards += list({row_id(r): r for r in moved}.values())
        what = "the patches change" if len(heads) > 1 else "the patch changes"
        print(f"ab_rows: {what} the launches of {len(changed)} rows; {len(moved)} more "
              "re-timed", file=sys.stderr)
    chosen = slow + guards
    if not chosen:
        p.error(f"no rows of {args.ops} in {args.results}")
    extra = bench_args(result, chosen, ops) + passthrough
    print(f"ab_rows: {len(slow)} rows under {args.below}x torch and {len(guards)} guards; "
          f"bench_kernels {' '.join(extra)}", file=sys.stderr)
    if args.dry_run:
        return 0
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in ["base", *heads]}
    if args.again:
        for name, done in runs.items():
            done += [json.loads(f.read_text(encoding="utf-8"))
                     for f in sorted(args.out.glob(f"{name}-*.json"))]
        if not all(runs.values()):
            p.error(f"--again: {args.out} lacks base-N.json or one of "
                    f"{', '.join(h + '-N.json' for h in heads)}")
    for n in range(0 if args.again else args.rounds):
        runs["base"].append(run_variant(f"base-{n}", extra, args.out, None,
                                        ROOT / "benchmarks" / "bench_kernels.py"))
        for name, site in sites.items():
            runs[name].append(run_variant(f"{name}-{n}", extra, args.out, site,
                                          args.out / name / "tree" / "benchmarks"
                                          / "bench_kernels.py"))
    ids = {row_id(r) for r in chosen}
    base = best_of(runs["base"], ids)
    base_broken = broken(runs["base"], ids)
    code = 0
    for name, patch in zip(heads, args.patches, strict=True):
        ab = compare(base, best_of(runs[name], ids),
                     {"base": base_broken, "head": broken(runs[name], ids)})
        saved = "ab.json" if len(heads) == 1 else f"ab-{name}.json"
        (args.out / saved).write_text(json.dumps(ab, indent=1), encoding="utf-8")
        if len(heads) > 1:
            print(f"## {name}: {patch}\n")
        print(report(ab))
        if ab["failed"].get("head"):
            print(f"ab_rows: the patched tree {name} ({patch}) failed "
                  f"{len(ab['failed']['head'])} row(s) that are listed above: the patch breaks "
                  "them", file=sys.stderr)
            code = 1
    return code


if __name__ == "__main__":
    sys.exit(main())
