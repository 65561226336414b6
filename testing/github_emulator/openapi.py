"""How emulator routes are compared with GitHub's REST description (`tools/openapi_routes.py`).

Parameter names differ (`{id}` here, `{check_run_id}` there) and a `+` marks a parameter that
may hold slashes here, so paths are compared with every parameter written `{}`; a literal
segment here may stand for a parameter there (`/zip` for `{archive_format}`). A few routes are
not REST operations at all; they are listed with the reason.
"""

from __future__ import annotations

import re

NOT_REST = {
    "/settings/apps/new": "the App manifest flow's web form on github.com, not the API",
    "/organizations/{org}/settings/apps/new": "the same form for an organisation",
    "/repos/{owner}/{repo}/contents": "the root listing: `/contents/{path}` with an empty path",
    "/repos/{owner}/{repo}/contents/": "the same, as PyGithub spells it",
    "/_emu/blobs/{owner}/{repo}/artifacts/{id}": "artifact storage the zip download redirects "
                                                 "to (another host on GitHub)",
}

PARAM = re.compile(r"\{[^{}]+\}")


def normalise(path: str) -> str:
    """`path` with each `{parameter}` written `{}`."""
    return PARAM.sub("{}", path)


def described(method: str, template: str, operations: dict[tuple[str, str], str]) -> str | None:
    """The description's path of the operation route (`method`, `template`) serves, or None.
    `operations` maps (METHOD, normalised path) to the path as described."""
    mine = normalise(template)
    if (method, mine) in operations:
        return operations[(method, mine)]
    parts = mine.split("/")
    for (m, path), spelled in sorted(operations.items()):
        theirs = path.split("/")
        if m == method and len(theirs) == len(parts) and all(
                a == b or b == "{}" for a, b in zip(parts, theirs, strict=True)):
            return spelled
    return None
