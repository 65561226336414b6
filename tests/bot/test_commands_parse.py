"""Which comment lines are commands; quoting untrusted text; thousands of hostile comments."""

from __future__ import annotations

import random

import pytest

from flagbot.bot.commands.parse import MAX_COMMANDS, parse
from flagbot.bot.github.markdown import code, code_block


def names(body: str) -> list[tuple[str, tuple[str, ...]]]:
    return list(parse(body).signature())


@pytest.mark.parametrize(("body", "expected"), [
    ("/unpatch A_X100 1a2b", [("unpatch", ("A_X100", "1a2b"))]),
    ("please\n/help\nthanks", [("help", ())]),
    ("   /help", [("help", ())]),
    ("/HELP", [("help", ())]),
    ("/help\r\n/patch A_X100\r\n", [("help", ()), ("patch", ("A_X100",))]),
    ("text /help", []),
    ("> /help", []),
    ("  > /unpatch A_X100 1a2b", []),
    ("    /help", []),
    ("\t/help", []),
    ("```\n/help\n```\n/patch", [("patch", ())]),
    ("~~~~\n/help\n~~~\n/patch\n~~~~\n/unpatch A_B 1234", [("unpatch", ("A_B", "1234"))]),
    ("```\n/help", []),  # an unclosed fence runs to the end
    ("<!-- /help -->\n/patch", [("patch", ())]),
    ("<!--\n/help\n-->", []),
    ("/path/to/file is broken", []),
    ("／help", []),  # full-width solidus
    ("/he\u200blp", []),  # zero-width space inside the name
    ("x\u2028/help", []),  # GitHub renders U+2028 inside the line
])
def test_command_lines(body: str, expected: list[tuple[str, tuple[str, ...]]]) -> None:
    assert names(body) == expected


def test_more_commands_than_the_bound_are_counted_not_run() -> None:
    parsed = parse("\n".join(["/help"] * (MAX_COMMANDS + 5)))
    assert len(parsed.commands) == MAX_COMMANDS
    assert parsed.dropped == 5


def test_a_huge_argument_list_is_flagged_and_bounded() -> None:
    inv = parse("/unpatch " + " ".join(["A_X100"] * 5000)).commands[0]
    assert inv.too_many_args and len(inv.args) <= 16 and len(inv.line) <= 1000


@pytest.mark.parametrize("text", ["plain", "a`b", "``x``", "`", "", "x\n\ny", "<!-- -->", "a" * 500])
def test_code_span_cannot_be_closed_by_its_text(text: str) -> None:
    span = code(text, 100)
    ticks = len(span) - len(span.lstrip("`"))
    inner = span[ticks:-ticks]
    assert "\n" not in span and "`" * ticks not in inner and len(inner) <= 102


def test_code_block_fence_is_longer_than_any_backtick_run() -> None:
    block = code_block(" ````evil | 1 +\n```\n")
    fence = block.split("\n", 1)[0]
    assert set(fence) == {"`"} and len(fence) == 5 and block.endswith("\n" + fence)


HOSTILE_PARTS = ["/unpatch", "/patch", "/help", "/x", "../../etc/passwd", "$(rm -rf /)", "`id`",
                 ";", "|", "&&", "A_X100", "Ａ_X100", "A_Х100", "1a2b3c4d", "--upload-pack=sh",
                 "-c", "core.hooksPath=/tmp", "HEAD~1", "@{-1}", "\u202e", "\x00", "💥", ">",
                 "```", "~~~", "<!--", "-->", "\r", "\n", "\u2028", " " * 4, "\t", "x" * 5000]


def test_thousands_of_hostile_comments_parse_within_bounds() -> None:
    rng = random.Random(11)
    for _ in range(3000):
        body = "".join(rng.choice(HOSTILE_PARTS) + rng.choice([" ", "\n", ""]) for _ in range(rng.randint(1, 60)))
        parsed = parse(body)
        assert len(parsed.commands) <= MAX_COMMANDS
        for inv in parsed.commands:
            assert inv.name.isascii() and inv.name.replace("-", "").replace("_", "").isalnum()
            assert len(inv.args) <= 16 and len(inv.line) <= 1000
