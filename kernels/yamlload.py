"""Read YAML exactly as `yaml.safe_load` does, keeping line numbers and reporting duplicate keys.

FlagGems reads `tune_configs.yaml` with `yaml.safe_load` (YAML 1.1: `yes`/`on` are booleans,
`0777` is octal, `1e3` is a string), so the backend checker and the kernel harness read it
with PyYAML's own SafeLoader: its resolver and constructors decide every value. Only the
mapping and sequence constructors are replaced, to build dicts and lists that remember their
lines and to note a key written twice, which `safe_load` silently resolves to the last value.
Standard library and PyYAML only: the device side and the checker both import this module.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.constructor import ConstructorError

# libyaml's parser is several times faster than the pure-Python one; both give the same nodes.
_BASE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE_TAG = "tag:yaml.org,2002:merge"
# Nodes of a document with every alias expanded. Aliases share one object when loaded, but
# anything that walks the result (merging, validating, printing) sees them expanded: nine
# anchors of nine aliases each (a few hundred bytes) are a billion nodes. Real files have a
# few thousand.
MAX_EXPANDED_NODES = 200_000


class TooManyNodes(yaml.YAMLError):
    """The document's aliases expand to more than MAX_EXPANDED_NODES nodes."""


def expanded_size(root: yaml.Node, limit: int = MAX_EXPANDED_NODES) -> int:
    """How many nodes `root` has with every alias expanded, counted up to just past `limit`
    (each distinct node is visited once; a node inside itself counts once)."""
    sizes: dict[int, int] = {}
    busy: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if key in sizes:
            continue
        if isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        else:
            children = []
        if not children_done:
            busy.add(key)
            stack.append((node, True))
            stack.extend((c, False) for c in children if id(c) not in sizes and id(c) not in busy)
            continue
        busy.discard(key)
        sizes[key] = 1 + sum(sizes.get(id(c), 1) for c in children)
        if sizes[key] > limit:
            return sizes[key]
    return sizes[id(root)]


def single_node(loader: Any, text: str) -> Any:
    """The loader's one document node (of `text`), refused when its aliases expand past the
    limit. Text without a `*` has no alias, so nothing to expand: the walk is skipped (it is
    a third of the time of reading a large tune file)."""
    node = loader.get_single_node()
    if node is not None and "*" in text and expanded_size(node) > MAX_EXPANDED_NODES:
        raise TooManyNodes(f"aliases expand to more than {MAX_EXPANDED_NODES} nodes; "
                           "write the values out instead of nesting aliases")
    return node


def safe_load_bounded(text: str) -> Any:
    """`yaml.safe_load(text)`, refusing documents whose aliases expand past the limit
    (TooManyNodes, a YAMLError); nesting too deep for the parser is a YAMLError too."""
    loader = _BASE(text)
    try:
        node = single_node(loader, text)
        return None if node is None else loader.construct_document(node)
    except RecursionError:
        raise yaml.YAMLError("nested too deeply to read") from None
    finally:
        loader.dispose()


class YDict(dict[Any, Any]):
    """A mapping that remembers its own line and the line of each key (1-based).

    `dropped` keeps (key, line, value) of each value a later duplicate key replaced, so a
    checker can still report what is wrong inside the block that loaders silently discard.
    """

    line: int = 0
    key_lines: dict[Any, int]
    dropped: list[tuple[Any, int, Any]]


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


class _LineLoader(_BASE):  # type: ignore[misc]
    """SafeLoader whose mappings and sequences are YDict / YList."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.duplicates: list[tuple[int, str]] = []


def _construct_map(loader: _LineLoader, node: yaml.MappingNode) -> Iterator[YDict]:
    data = YDict()
    data.line = node.start_mark.line + 1
    data.key_lines = {}
    data.dropped = []
    yield data  # the SafeConstructor protocol: yield first, so aliases may point back here
    if not any(key_node.tag == _MERGE_TAG for key_node, _ in node.value):
        _fill_map(loader, node, data)
        return
    own: dict[Any, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == _MERGE_TAG:
            continue
        key = _hashable_key(loader, node, key_node)
        line = key_node.start_mark.line + 1
        if key in own:
            loader.duplicates.append((line, f"{key!s} (first at line {own[key]})"))
        own[key] = line
    # `<<: *base` keys: PyYAML's own merge, which lets the mapping's own keys win.
    loader.flatten_mapping(node)
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=False)
        data[key] = loader.construct_object(value_node, deep=False)
        data.key_lines[key] = own.get(key, data.line)


def _hashable_key(loader: _LineLoader, node: yaml.MappingNode, key_node: yaml.Node) -> Any:
    key = loader.construct_object(key_node, deep=False)
    try:
        hash(key)
    except TypeError:
        raise ConstructorError("while constructing a mapping", node.start_mark,
                               "found unhashable key", key_node.start_mark) from None
    return key


def _fill_map(loader: _LineLoader, node: yaml.MappingNode, data: YDict) -> None:
    """A mapping without `<<` merge keys (nearly all): each key constructed once."""
    lines = data.key_lines
    for key_node, value_node in node.value:
        key = _hashable_key(loader, node, key_node)
        line = key_node.start_mark.line + 1
        if key in lines:
            loader.duplicates.append((line, f"{key!s} (first at line {lines[key]})"))
            data.dropped.append((key, lines[key], data[key]))
        lines[key] = line
        data[key] = loader.construct_object(value_node, deep=False)


def _construct_seq(loader: _LineLoader, node: yaml.SequenceNode) -> Iterator[YList]:
    data = YList()
    data.line = node.start_mark.line + 1
    data.item_lines = [item.start_mark.line + 1 for item in node.value]
    yield data
    data.extend(loader.construct_sequence(node))


_LineLoader.add_constructor("tag:yaml.org,2002:map", _construct_map)
_LineLoader.add_constructor("tag:yaml.org,2002:seq", _construct_seq)


def load_yaml(text: str) -> Loaded:
    """Parse `text` (one document, as `safe_load` requires); never raises for bad input."""
    loader = _LineLoader(text)
    try:
        node = single_node(loader, text)
        data = None if node is None else loader.construct_document(node)
    except RecursionError:
        return Loaded(error=(1, "nested too deeply to read"))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        return Loaded(error=(mark.line + 1 if mark else 1, str(exc.problem or exc).strip()))
    except yaml.YAMLError as exc:
        return Loaded(error=(1, str(exc).strip()))
    finally:
        loader.dispose()
    return Loaded(data=data, duplicates=sorted(loader.duplicates))
