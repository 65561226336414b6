"""Which lines of a comment are slash commands, and the bounds on how much of it is read.

A command is a line starting with `/name` (up to three spaces before it, as Markdown allows).
Lines in fenced or indented code blocks, block quotes (`>`) and HTML comments are text, not
commands. Only `\\n` and `\\r` end a line: GitHub renders other separators (U+2028, form feed)
inside the line, so they must not start a command there either.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_BODY_CHARS = 65536  # GitHub's own limit on a comment body; anything longer is not read
MAX_COMMANDS = 10  # run per comment; the rest get one line saying so
MAX_ARGS = 16  # arguments kept per command (more is a usage error of that command)
MAX_LINE_CHARS = 1000  # of a command line kept for parsing and quoting

LINE_SPLIT = re.compile(r"\r\n|\r|\n")
HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
QUOTE = re.compile(r" {0,3}>")
INDENTED = re.compile(r"(?: {4}|\t| {0,3}\t)")
COMMAND = re.compile(r" {0,3}/([A-Za-z][A-Za-z0-9_-]{0,39})(?=[ \t]|$)(.*)")


@dataclass(frozen=True)
class Invocation:
    """One command line: its name (lower case), its arguments and the line as written (clipped)."""

    name: str
    args: tuple[str, ...]
    line: str
    too_many_args: bool = False


@dataclass(frozen=True)
class Parsed:
    """The commands of a comment, in order, and how many more there were beyond the bound."""

    commands: tuple[Invocation, ...]
    dropped: int = 0

    def signature(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """What the comment asks for, for telling whether an edit changed the commands."""
        return tuple((c.name, c.args) for c in self.commands)


def command_lines(body: str) -> list[str]:
    """The lines of `body` outside code blocks, quotes and HTML comments that start with `/`."""
    text = HTML_COMMENT.sub("", body[:MAX_BODY_CHARS])
    fence: str | None = None
    found = []
    for line in LINE_SPLIT.split(text):
        if fence is not None:
            close = FENCE.match(line)
            if close and close.group(1)[0] == fence[0] and len(close.group(1)) >= len(fence) \
                    and not line[close.end():].strip():
                fence = None
            continue
        opened = FENCE.match(line)
        if opened:
            fence = opened.group(1)
            continue
        if QUOTE.match(line) or INDENTED.match(line):
            continue
        if line.lstrip(" ").startswith("/"):
            found.append(line)
    return found


def parse(body: str) -> Parsed:
    """The commands in `body`, at most MAX_COMMANDS of them."""
    commands: list[Invocation] = []
    dropped = 0
    for raw in command_lines(body):
        match = COMMAND.match(raw[:MAX_LINE_CHARS])
        if match is None:
            continue  # `/path/to/file` and the like: prose, not a command
        if len(commands) >= MAX_COMMANDS:
            dropped += 1
            continue
        args = match.group(2).split()
        commands.append(Invocation(match.group(1).lower(), tuple(args[:MAX_ARGS]),
                                   raw[:MAX_LINE_CHARS].strip(), len(args) > MAX_ARGS))
    return Parsed(tuple(commands), dropped)
