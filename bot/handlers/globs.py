"""Path globs of `.github/flagbot.yml` (`**` any folders, `*`/`?` within one name, `[..]`)."""

from __future__ import annotations

import re
from functools import lru_cache


def glob_regex(glob: str) -> str:
    """Translate a path glob (`**` any folders, `*`/`?` within one name, `[..]`) to a regex."""
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        elif glob[i] == "[" and "]" in glob[i + 1 :]:
            end = glob.index("]", i + 1)
            body = glob[i + 1 : end].replace("\\", "\\\\")
            out.append("[^" + body[1:] + "]" if body.startswith("!") else "[" + body + "]")
            i = end + 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return "".join(out) + r"\Z"


@lru_cache(maxsize=256)
def compile_globs(globs: tuple[str, ...]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Compiled (glob, regex) pairs, cached: every delivery of a repo uses the same list."""
    return tuple((g, re.compile(glob_regex(g))) for g in globs)


def matching_glob(path: str, globs: tuple[tuple[str, re.Pattern[str]], ...]) -> str | None:
    """The first glob that matches `path`, or None."""
    for glob, rx in globs:
        if rx.match(path):
            return glob
    return None
