"""Text from a pull request (paths, folder and device names, findings) inside the bot's
Markdown: never a mention, a link or formatting of the author's choosing.

`code` puts text in an inline code span, where GitHub renders no mention or link; the fence is
longer than any run of backticks inside, so a backtick in a file name cannot close it. `plain`
is for text that stays outside code: each `@` is followed by a word joiner (U+2060), so
`@octocat` shows but pings no one, and backticks are escaped.
"""

from __future__ import annotations

import re

WORD_JOINER = "\u2060"


def code(text: str) -> str:
    """`text` as one inline code span (line breaks become spaces)."""
    text = text.replace("\r", " ").replace("\n", " ")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def plain(text: str) -> str:
    """`text` outside a code span, with no mention and no code span of its own."""
    return text.replace("@", "@" + WORD_JOINER).replace("`", "\\`")
