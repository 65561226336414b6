"""Text a stranger controls (paths, folder and device names, findings, comment arguments) inside
the bot's Markdown: never a mention, a link or formatting of the author's choosing.

`code` puts text in an inline code span, where GitHub renders no mention or link; the fence is
longer than any run of backticks inside, so a backtick in a file name cannot close it, and the
text is cut to a bounded length. `code_block` does the same for several lines. `plain` is for
text that stays outside code: each `@` is followed by a word joiner (U+2060), so `@octocat`
shows but pings no one, and backticks are escaped.

All three also break HTML comment delimiters (`<!--`, `-->`) with a word joiner: the bot keeps
hidden markers and metadata in its own comments as HTML comments, and a file named like one
must not be mistaken for it (it would let a pull request erase or rewrite a section).
"""

from __future__ import annotations

import re

BACKTICKS = re.compile(r"`+")
MAX_SPAN_CHARS = 200
WORD_JOINER = "\u2060"


def unmarked(text: str) -> str:
    """`text` with no HTML comment delimiter left in it (it reads the same)."""
    return text.replace("<!", "<" + WORD_JOINER + "!").replace("->", "-" + WORD_JOINER + ">")


def clip(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, marked with an ellipsis when cut."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def _fence(text: str, shortest: int) -> str:
    longest = max((len(run) for run in BACKTICKS.findall(text)), default=0)
    return "`" * max(shortest, longest + 1)


def code(text: str, limit: int = MAX_SPAN_CHARS) -> str:
    """`text` as one inline code span: one line, clipped, delimited by more backticks than it holds."""
    flat = unmarked(" ".join(clip(text, limit).split()))
    ticks = _fence(flat, 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or not flat else ""
    return f"{ticks}{pad}{flat}{pad}{ticks}"


def code_block(text: str) -> str:
    """`text` as a fenced code block whose fence is longer than any backtick run in it."""
    text = unmarked(text)
    fence = _fence(text, 3)
    return f"{fence}\n{text.rstrip()}\n{fence}"


def plain(text: str) -> str:
    """`text` outside a code span, with no mention and no code span of its own."""
    return unmarked(text).replace("@", "@" + WORD_JOINER).replace("`", "\\`")
