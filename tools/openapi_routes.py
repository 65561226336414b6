#!/usr/bin/env python3
"""Extract, from GitHub's published REST description, the operations the emulator serves.

    npm pack @octokit/openapi && tar xzf octokit-openapi-*.tgz package/generated/api.github.com.json
    python tools/openapi_routes.py package/generated/api.github.com.json

writes testing/github_emulator/openapi_routes.txt: one line per emulator route, `METHOD /path`
as GitHub's description spells it, then (tab-separated) `query=` its query parameters and
`body=` its JSON body's top-level fields, with the description's version on top. The
whole description is over 10 MB; this list is what tests/bot/test_emulator_openapi.py compares
the emulator's route table with (and it checks the full file too when
FLAGBOT_OPENAPI_JSON names it). Exit 1 when an emulator route is not in the description.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

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


def resolve(doc: dict[str, Any], node: Any) -> Any:
    """`node` with a local `$ref` followed (one level is all parameters and bodies use)."""
    while isinstance(node, dict) and isinstance(node.get("$ref"), str):
        target: Any = doc
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target[part]
        node = target
    return node


def fields(doc: dict[str, Any], path: str, method: str) -> tuple[list[str], list[str]]:
    """(query parameter names, top-level JSON body property names) of one operation."""
    op = doc["paths"][path][method.lower()]
    params = [resolve(doc, p) for p in op.get("parameters") or []]
    query = sorted(str(p["name"]) for p in params if p.get("in") == "query")
    schema = resolve(doc, ((op.get("requestBody") or {}).get("content") or {})
                     .get("application/json", {}).get("schema") or {})
    names: set[str] = set()
    for part in [schema, *(schema.get("oneOf") or []), *(schema.get("anyOf") or []),
                 *(schema.get("allOf") or [])]:
        names |= set(resolve(doc, part).get("properties") or {})
    return query, sorted(names)


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
            query, body = fields(doc, path, method)
            lines.append(f"{method} {path}\tquery={','.join(query)}\tbody={','.join(body)}")
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
