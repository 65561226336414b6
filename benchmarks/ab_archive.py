"""An A/B folder as one archive to keep under benchmarks/results: its rounds, every variant's
launches and each head's verdict in one gzipped JSON file, the form `ab_project.py` reads.

Run (any machine, repository root):
  python benchmarks/ab_archive.py DIR OUT.json.gz --note TEXT
DIR is an `ab_rows.py --changed --out DIR` folder (unpacked from the ab.tgz a lent machine
sends back): base-N.json and HEAD-N.json (the rounds), launches-VARIANT.json, and ab.json
(one head) or ab-HEAD.json (several). The archive holds {"rounds": {name: run},
"launches": {variant: launches}, "ab": {head: verdict}, "note": TEXT}; the patched trees'
copies are left out. Refuses a folder without rounds or launch files, and an OUT that exists.
"""
from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
from pathlib import Path
from typing import Any

ROUND = re.compile(r"(base|head\d*)-\d+")  # a round's name: variant-N, as ab_project reads it


def read_folder(folder: Path) -> dict[str, Any]:
    """The rounds, launches and verdicts of the A/B in `folder`, as an archive holds them."""
    def read(path: Path) -> Any:
        return json.loads(path.read_text(encoding="utf-8"))

    verdicts = [f for f in sorted(folder.glob("ab*.json"))
                if f.stem == "ab" or f.stem.startswith("ab-")]
    return {"rounds": {f.stem: read(f) for f in sorted(folder.glob("*-*.json"))
                       if ROUND.fullmatch(f.stem)},
            "launches": {f.stem[len("launches-"):]: read(f)
                         for f in sorted(folder.glob("launches-*.json"))},
            "ab": {"head" if f.stem == "ab" else f.stem[len("ab-"):]: read(f) for f in verdicts}}


def archive(folder: Path, note: str) -> dict[str, Any]:
    """The archive's content for the A/B in `folder`."""
    content = read_folder(folder)
    if not content["rounds"] or "base" not in content["launches"]:
        raise SystemExit(f"ab_archive: {folder} holds no rounds (base-N.json, head-N.json) or no "
                         "launches-base.json: is it an `ab_rows.py --changed --out` folder?")
    return {**content, "note": note}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", type=Path, metavar="DIR")
    p.add_argument("out", type=Path, metavar="OUT.json.gz")
    p.add_argument("--note", required=True,
                   help="what was timed: machine, date, base tree, heads, what was merged")
    args = p.parse_args(argv)
    if not args.folder.is_dir():
        p.error(f"{args.folder}: no such folder")
    if args.out.exists():
        p.error(f"{args.out} exists: archives are kept, not overwritten")
    content = archive(args.folder, args.note)
    with gzip.open(args.out, "wt", encoding="utf-8", compresslevel=9) as f:
        json.dump(content, f)
    print(f"ab_archive: {len(content['rounds'])} rounds, launches of "
          f"{', '.join(content['launches'])} -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
