"""Putting text that came from a pull request or a comment into Markdown without it acting as
Markdown: code spans and code blocks whose fences cannot be closed by the text inside them."""

from __future__ import annotations

import re

BACKTICKS = re.compile(r"`+")
MAX_SPAN_CHARS = 200


def clip(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, marked with an ellipsis when cut."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def code(text: str, limit: int = MAX_SPAN_CHARS) -> str:
    """`text` as one inline code span: one line, clipped, delimited by more backticks than it holds."""
    flat = " ".join(clip(text, limit).split())
    longest = max((len(m) for m in BACKTICKS.findall(flat)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or not flat else ""
    return f"{ticks}{pad}{flat}{pad}{ticks}"


def code_block(text: str) -> str:
    """`text` as a fenced code block whose fence is longer than any backtick run in it."""
    longest = max((len(m) for m in BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text.rstrip()}\n{fence}"
