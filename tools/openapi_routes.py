#!/usr/bin/env python3
"""Extract, from GitHub's published REST description, the operations the emulator serves.

    npm pack @octokit/openapi && tar xzf octokit-openapi-*.tgz package/generated/api.github.com.json
    python tools/openapi_routes.py package/generated/api.github.com.json

writes testing/github_emulator/openapi_routes.txt: one `METHOD /path/{param}` line per emulator
route, spelled as GitHub's description spells it, with the description's version on top. The
whole description is over 10 MB; this list is what tests/bot/test_emulator_openapi.py compares
the emulator's route table with (and it checks the full file too when
FLAGBOT_OPENAPI_JSON names it). Exit 1 when an emulator route is not in the description.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from testing.github_emulator.openapi import NOT_REST, described, normalise  # noqa: E402
from testing.github_emulator.routes import TABLE  # noqa: E402

OUT = ROOT / "testing/github_emulator/openapi_routes.txt"
METHODS = ("get", "post", "put", "patch", "delete")


def operations(doc: dict[str, object]) -> dict[tuple[str, str], str]:
    """{(METHOD, normalised path): path as the description writes it}."""
    paths = doc.get("paths")
    assert isinstance(paths, dict)
    return {(m.upper(), normalise(p)): p for p, item in paths.items()
            for m in item if m in METHODS}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    doc = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    known = operations(doc)
    lines, missing = [], []
    for method, template, _, _ in TABLE:
        if template in NOT_REST:
            continue
        path = described(method, template, known)
        if path is not None:
            lines.append(f"{method} {path}")
        else:
            missing.append(f"{method} {template}")
    version = re.sub(r"\s+", " ", str((doc.get("info") or {}).get("version", "?")))  # type: ignore[union-attr]
    OUT.write_text(f"# GitHub REST description (@octokit/openapi api.github.com.json) {version}\n"
                   + "\n".join(sorted(set(lines))) + "\n", encoding="utf-8")
    for m in missing:
        print(f"not in GitHub's REST description: {m}", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
