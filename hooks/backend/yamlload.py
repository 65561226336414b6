"""A YAML loader that keeps line numbers and reports duplicate keys at any nesting level.

`yaml.safe_load` keeps the last of two equal keys and says nothing, so a tune entry pasted twice
silently replaces the first; FlagGems loads `tune_configs.yaml` exactly that way (issue 4).
Built on parser events rather than PyYAML's constructors: a tune file has thousands of nodes
and the constructor machinery costs ~20 us each, too slow for 16 vendors in under a second.
Scalars resolve as `yaml.safe_load` resolves them (YAML 1.1 core schema).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, cast

import yaml

# libyaml parses about ten times faster than the pure-Python parser; both give the same events.
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DECIMAL = re.compile(r"[-+]?(?:0|[1-9][0-9]*)\Z")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_SPECIAL_WORDS = frozenset(
    "yes Yes YES no No NO true True TRUE false False FALSE on On ON off Off OFF null Null NULL "
    "y Y n N".split())
_MERGE = "<<"


class YDict(dict[Any, Any]):
    """A mapping that remembers its own line and the line of each key (1-based)."""

    line: int = 0
    key_lines: dict[Any, int]


class YList(list[Any]):
    """A sequence that remembers its own line and the line of each item (1-based)."""

    line: int = 0
    item_lines: list[int]


@dataclass
class Loaded:
    """The document (or None), duplicate keys as (line, "key (first at N)") and a syntax error."""

    data: Any = None
    duplicates: list[tuple[int, str]] = field(default_factory=list)
    error: tuple[int, str] | None = None


_NOKEY = object()


class _Builder:
    """Turns parser events into YDict / YList / scalars, iteratively (no per-node recursion)."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader
        self.anchors: dict[str, Any] = {}
        self.duplicates: list[tuple[int, str]] = []

    def scalar(self, ev: Any) -> Any:
        value = ev.value
        plain = not ev.style  # libyaml reports plain scalars as '', the Python parser as None
        if plain and ev.implicit[0] and ev.tag is None:
            if _DECIMAL.match(value):
                return int(value)
            if _WORD.match(value) and value not in _SPECIAL_WORDS or value == _MERGE:
                return value
        elif not plain and ev.tag in (None, "!"):
            return value  # quoted or block scalars are strings
        # Rare forms (floats, hex, timestamps, null, explicit tags): PyYAML's own resolution.
        tag = ev.tag if ev.tag not in (None, "!") else self.loader.resolve(
            yaml.ScalarNode, value, ev.implicit)
        node = yaml.ScalarNode(tag, value, ev.start_mark, ev.end_mark, style=ev.style or None)
        return self.loader.construct_object(node, deep=True)

    def _put(self, frame: list[Any], value: Any, line: int, merge_key: bool) -> None:
        """Attach a finished value to the open container `frame` = [container, key, key_line, merges]."""
        container = frame[0]
        if isinstance(container, YList):
            container.append(value)
            container.item_lines.append(line)
        elif frame[1] is _NOKEY:
            frame[1], frame[2] = (_MERGE if merge_key else value), line
            if not merge_key:
                try:
                    hash(value)
                except TypeError:
                    frame[1] = repr(value)
        else:
            key, frame[1] = frame[1], _NOKEY
            if key is _MERGE and frame[2] != -1 and frame[4]:
                frame[3].extend(value if isinstance(value, list) else [value])
                return
            if key in container.key_lines:
                self.duplicates.append((frame[2], f"{key!s} (first at line {container.key_lines[key]})"))
            container.key_lines[key] = frame[2]
            container[key] = value

    def build(self) -> Any:
        loader, stack = self.loader, cast(list[list[Any]], [])
        root: Any = None
        while loader.check_event():
            ev = loader.get_event()
            cls = type(ev)
            line = ev.start_mark.line + 1
            if cls is yaml.ScalarEvent:
                value = self.scalar(ev)
            elif cls is yaml.AliasEvent:
                value = self.anchors.get(ev.anchor)
            elif cls is yaml.MappingStartEvent or cls is yaml.SequenceStartEvent:
                container: Any = YDict() if cls is yaml.MappingStartEvent else YList()
                container.line = line
                if isinstance(container, YDict):
                    container.key_lines = {}
                else:
                    container.item_lines = []
                if ev.anchor:
                    self.anchors[ev.anchor] = container
                stack.append([container, _NOKEY, 0, [], False])
                continue
            elif cls is yaml.MappingEndEvent or cls is yaml.SequenceEndEvent:
                frame = stack.pop()
                value, line = frame[0], frame[0].line
                for source in frame[3]:  # `<<: *base` fills only keys the mapping lacks
                    for key, item in (source.items() if isinstance(source, dict) else ()):
                        value.setdefault(key, item)
                        value.key_lines.setdefault(key, value.line)
            elif cls is yaml.DocumentEndEvent:
                break
            else:
                continue  # stream / document start
            if ev.__dict__.get("anchor") and cls is yaml.ScalarEvent:
                self.anchors[ev.anchor] = value
            if not stack:
                root = value
                continue
            frame = stack[-1]
            is_merge = (cls is yaml.ScalarEvent and frame[1] is _NOKEY and value == _MERGE
                        and not ev.style and isinstance(frame[0], YDict))
            if is_merge:
                frame[4] = True
            self._put(frame, value, line, is_merge)
        return root


def load_yaml(text: str) -> Loaded:
    """Parse the first YAML document of `text`; never raises for bad input (returns the error)."""
    loader = _Loader(text)
    builder = _Builder(loader)
    try:
        data = builder.build()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        return Loaded(error=(mark.line + 1 if mark else 1, str(exc.problem or exc).strip()))
    except yaml.YAMLError as exc:
        return Loaded(error=(1, str(exc).strip()))
    finally:
        loader.dispose()
    return Loaded(data=data, duplicates=builder.duplicates)
