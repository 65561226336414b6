"""A reader for the YAML subset tune_configs.yaml files use, because kernels/ may not import PyYAML.

Supported: block mappings and sequences (`- key: v` items too), flow `[...]` and `{...}`,
plain/quoted scalars (int, float, true/false, null), `#` comments. Anything else raises
YamlError with the line number, so an unsupported file fails loudly instead of misreading.
"""

from __future__ import annotations

import re
from typing import Any

_INT = re.compile(r"^[-+]?(0|[1-9][0-9_]*)$")
_FLOAT = re.compile(r"^[-+]?([0-9][0-9_]*)?\.?[0-9]+([eE][-+]?[0-9]+)?$")


class YamlError(ValueError):
    """The text is not in the supported subset (message names the line)."""


def _strip_comment(text: str) -> str:
    quote = ""
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or text[i - 1] in " \t"):
            return text[:i].rstrip()
    return text.rstrip()


def scalar(text: str) -> Any:
    """A plain or quoted scalar as int, float, bool, None or str."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if text in ("", "~", "null", "Null", "NULL"):
        return None
    if _INT.match(text):
        return int(text.replace("_", ""))
    if _FLOAT.match(text) and any(c.isdigit() for c in text):
        return float(text.replace("_", ""))
    return text


def _split_flow(body: str, line: int) -> list[str]:
    parts, depth, start, quote = [], 0, 0, ""
    for i, ch in enumerate(body):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    if depth or quote:
        raise YamlError(f"line {line}: unbalanced flow collection")
    parts.append(body[start:])
    return [p.strip() for p in parts if p.strip()]


def value(text: str, line: int) -> Any:
    """A flow collection or scalar written on one line."""
    text = text.strip()
    if text.startswith("["):
        if not text.endswith("]"):
            raise YamlError(f"line {line}: flow sequence must end on its line")
        return [value(p, line) for p in _split_flow(text[1:-1], line)]
    if text.startswith("{"):
        if not text.endswith("}"):
            raise YamlError(f"line {line}: flow mapping must end on its line")
        out: dict[str, Any] = {}
        for part in _split_flow(text[1:-1], line):
            key, sep, rest = part.partition(":")
            if not sep:
                raise YamlError(f"line {line}: {part!r} is not key: value")
            out[str(scalar(key))] = value(rest, line)
        return out
    if text[:1] in "&*!|>":
        raise YamlError(f"line {line}: anchors, tags and block scalars are not supported")
    return scalar(text)


class _Parser:
    def __init__(self, text: str) -> None:
        self.lines: list[tuple[int, int, str]] = []  # (line number, indent, content)
        for number, raw in enumerate(text.splitlines(), 1):
            if "\t" in raw[: len(raw) - len(raw.lstrip())]:
                raise YamlError(f"line {number}: tabs in indentation")
            content = _strip_comment(raw)
            if content.strip() and content.strip() not in ("---", "..."):
                self.lines.append((number, len(content) - len(content.lstrip()), content.strip()))
        self.pos = 0

    def block(self, indent: int) -> Any:
        number, ind, content = self.lines[self.pos]
        if ind != indent:
            raise YamlError(f"line {number}: unexpected indentation")
        if content == "-" or content.startswith("- "):
            return self.sequence(indent)
        return self.mapping(indent)

    def nested(self, indent: int, number: int) -> Any:
        if self.pos < len(self.lines) and self.lines[self.pos][1] > indent:
            return self.block(self.lines[self.pos][1])
        if self.pos < len(self.lines) and self.lines[self.pos][1] == indent and \
                self.lines[self.pos][2].startswith("-"):
            return self.sequence(indent)  # `key:` followed by a sequence at the key's indent
        return None

    def sequence(self, indent: int) -> list[Any]:
        items: list[Any] = []
        while self.pos < len(self.lines):
            number, ind, content = self.lines[self.pos]
            if ind != indent or not (content == "-" or content.startswith("- ")):
                break
            rest = content[1:].strip()
            if not rest:
                self.pos += 1
                items.append(self.nested(indent, number))
            elif ":" in rest and not rest.startswith(("[", "{", "'", '"')) and \
                    re.match(r"^[^:]+:(\s|$)", rest):
                # `- key: v` opens a mapping whose keys sit two columns right of the dash.
                self.lines[self.pos] = (number, indent + 2, rest)
                items.append(self.mapping(indent + 2))
            else:
                self.pos += 1
                items.append(value(rest, number))
        return items

    def mapping(self, indent: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        while self.pos < len(self.lines):
            number, ind, content = self.lines[self.pos]
            if ind < indent or (ind == indent and content.startswith("- ")):
                break
            if ind > indent:
                raise YamlError(f"line {number}: unexpected indentation")
            match = re.match(r"^([^:{}\[\]]+?|'[^']*'|\"[^\"]*\"):(\s+(.*))?$", content)
            if not match:
                raise YamlError(f"line {number}: expected `key: value`, got {content!r}")
            key = str(scalar(match.group(1)))
            if key in out:
                raise YamlError(f"line {number}: key {key!r} appears twice")
            self.pos += 1
            rest = match.group(3)
            out[key] = value(rest, number) if rest else self.nested(indent, number)
        return out


def loads(text: str) -> Any:
    """Parse `text`; None for an empty document."""
    parser = _Parser(text)
    if not parser.lines:
        return None
    result = parser.block(parser.lines[0][1])
    if parser.pos != len(parser.lines):
        number = parser.lines[parser.pos][0]
        raise YamlError(f"line {number}: content after the document's end")
    return result
