"""Check one `<pkg>/dispatch/config/<platform>.yaml` against what its plugin registers.

The file is read as `yaml.safe_load` reads it (kernels/yamlload.py: line numbers, duplicate
keys, alias and nesting bounds). Each message says what the plugin does with the mistake at
run time: most of them fall back silently to another kernel or to the defaults.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flagbot.hooks.plugins.dispatch_facts import DispatchPlugin, Impl
from flagbot.hooks.plugins.rules import Report
from flagbot.hooks.plugins.sources import Sources
from flagbot.kernels.yamlload import YDict, YList, load_yaml

PREFER_VALUES = ("flagos", "vendor", "reference")
PLAIN_TOKENS = ("flagos", "reference", "vendor")


def close(word: str, choices: Iterable[object]) -> str:
    """` (did you mean X?)` for the nearest of `choices`, or nothing."""
    found = difflib.get_close_matches(word, sorted(str(c) for c in choices), n=1, cutoff=0.6)
    return f" (did you mean {found[0]!r}?)" if found else ""


def kind_of(value: Any) -> str:
    """The YAML type of a loaded value, as a message names it."""
    for types, name in ((bool, "boolean"), (dict, "mapping"), (list, "list"), (str, "string"),
                        ((int, float), "number"), (type(None), "null")):
        if isinstance(value, types):
            return name
    return type(value).__name__


@dataclass
class Scope:
    """What can serve ops on the platform this file is for."""

    platform: str  # how messages name it
    vendor_backends: set[str] | None  # `vendor/<dir>` folders registered there; None: all
    blacklist: set[str]
    allow: set[str] | None
    deny: set[str]


class ConfigCheck:
    """The checks of one config file; `report` collects the findings."""

    def __init__(self, report: Report, plugin: DispatchPlugin, path: Path) -> None:
        self.report = report
        self.plugin = plugin
        self.path = path
        self.dialect = plugin.dialect

    def add(self, rule: str, line: int, message: str) -> None:
        self.report.add(rule, self.path, line, message)

    # -- top level -------------------------------------------------------------------------
    def run(self, text: str) -> None:
        loaded = load_yaml(text)
        if loaded.error is not None:
            line, problem = loaded.error
            self.add("plugin-yaml-syntax", line, f"not valid YAML ({problem}): the plugin runs "
                     "with its built-in defaults, silently dropping this file's op_backends "
                     "and blacklists; fix the syntax")
            return
        data = loaded.data
        self.check_reachable()
        if data is None:
            return  # an empty file: the defaults, as the plugin reads it
        if not isinstance(data, YDict):
            self.add("plugin-config-type", 1, f"the file is a {kind_of(data)}, not a mapping: the "
                     "plugin ignores all of it and runs with its defaults; write `key: value` lines")
            return
        self.check_duplicates(data, loaded.duplicates)
        for key, line in data.key_lines.items():
            if key not in self.dialect.keys:
                self.add("plugin-unknown-key", line, f"unknown key {key!r}: {self.dialect.name} "
                         f"never reads it, so it has no effect{close(str(key), self.dialect.keys)} "
                         f"; fix the name or remove the key (keys it reads: "
                         f"{', '.join(sorted(self.dialect.keys))})")
        self.check_prefer(data)
        self.check_strict(data)
        allow = self.vendor_list(data, "allow_vendors")
        deny = self.vendor_list(data, "deny_vendors") or set()
        blacklist = self.name_list(data, "flagos_blacklist") or set()
        oot = self.name_list(data, "oot_blacklist")
        if oot is not None and self.plugin.oot_ops is not None:
            lines = data["oot_blacklist"].item_lines
            for name, line in zip(data["oot_blacklist"], lines, strict=True):
                if isinstance(name, str) and name not in self.plugin.oot_ops:
                    # no list of the ops here: a message must not change when the facts
                    # grow, or --since and the check run would call an old finding new
                    self.add("plugin-oot-unknown", line, f"oot_blacklist entry {name!r} is not an "
                             "out-of-tree op of the plugin (a key of OOT_OPS), so it has no "
                             f"effect{close(name, self.plugin.oot_ops)}; remove it")
        if "op_backends" in data:
            self.check_op_backends(data, self.scope(allow, deny, blacklist))

    def check_reachable(self) -> None:
        stem = self.path.stem
        if self.path.suffix != ".yaml" or stem not in self.plugin.platforms:
            hint = ""
            for platform, (device_name, device_type) in sorted(self.plugin.devices.items()):
                if stem in (device_name, device_type, self.plugin.platforms.get(platform)):
                    hint = f"; if it is meant for {platform}, rename it to {platform}.yaml"
                    break
            self.add("plugin-config-unreachable", 0, f"never loaded automatically: "
                     f"{self.dialect.name} loads <platform>.yaml and no detected platform is "
                     f"named {stem!r}; it applies only when {self.dialect.config_env} names it"
                     f"{hint}")

    def check_duplicates(self, data: YDict, duplicates: list[tuple[int, str]]) -> None:
        ops = data.get("op_backends")
        op_lines: set[int] = set()
        if isinstance(ops, YDict):
            op_lines = set(ops.key_lines.values()) | {line for _, line, _ in ops.dropped}
        for line, what in duplicates:
            if line in op_lines:
                self.add("plugin-duplicate-op", line, f"op {what} is listed again under "
                         "op_backends: PyYAML keeps only this last entry and drops the first "
                         "silently; merge the two")
            else:
                self.add("plugin-duplicate-key", line, f"key {what} appears twice: PyYAML "
                         "keeps only this last value and drops the first silently; merge them")

    def check_prefer(self, data: YDict) -> None:
        if "prefer" not in data:
            return
        value = data["prefer"]
        if isinstance(value, str) and value.strip().lower() in PREFER_VALUES:
            return
        self.add("plugin-prefer", data.key_lines["prefer"], f"prefer: {value!r} is not one of "
                 f"{', '.join(PREFER_VALUES)}: {self.dialect.name} {self.dialect.bad_prefer}"
                 f"{close(str(value).lower(), PREFER_VALUES)}; write one of them")

    def check_strict(self, data: YDict) -> None:
        value = data.get("strict")
        if value is None or isinstance(value, bool):
            return
        default = "true" if self.dialect.strict_default else "false"
        self.add("plugin-strict", data.key_lines["strict"], f"strict: {value!r} is a "
                 f"{kind_of(value)}, not a boolean: the plugin takes bool({value!r}) = "
                 f"{bool(value)}, so {'a failing kernel raises instead of falling back' if value else 'failures fall back'}; "
                 f"write strict: true or strict: false (unquoted; default {default})")

    # -- lists -----------------------------------------------------------------------------
    def name_list(self, data: YDict, key: str) -> set[str] | None:
        """The strings of list `key` (None when absent or unusable, reported)."""
        value = data.get(key)
        if value is None:
            return None
        if not isinstance(value, YList):
            self.add("plugin-list-type", data.key_lines[key], f"{key} is a {kind_of(value)}, not a "
                     "list: the plugin ignores it (a string is even read as a file path by "
                     f"FlagGems); write one `- name` line per entry")
            return None
        names = set()
        for item, line in zip(value, value.item_lines, strict=True):
            if isinstance(item, str):
                names.add(item)
            else:
                self.add("plugin-list-type", line, f"{key} entry {item!r} is a {kind_of(item)}, "
                         "not a name: it never matches an op; quote it or remove it")
        return names

    def vendor_list(self, data: YDict, key: str) -> set[str] | None:
        value = data.get(key)
        if value is None:
            return None
        line = data.key_lines[key]
        if isinstance(value, str) and self.dialect.comma_vendor_lists:
            items = [(v.strip(), line) for v in value.split(",") if v.strip()]
        elif isinstance(value, YList):
            items = [(str(v).strip(), n) for v, n in zip(value, value.item_lines, strict=True) if v]
        else:
            self.add("plugin-list-type", line, f"{key} is a {kind_of(value)}, not a list of vendor "
                     f"names: {self.dialect.name} misreads it; write one `- vendor` line per entry")
            return None
        known = self.plugin.vendors()
        for name, n in items:
            if name not in known:
                self.add("plugin-unknown-vendor", n, f"{key} names vendor {name!r}, which no "
                         f"backend registers{close(name, known)}: "
                         + ("with it the allow list admits no vendor kernel of that name"
                            if key == "allow_vendors" else "the entry has no effect")
                         + "; fix the vendor name")
        return {name for name, _ in items}

    # -- op_backends -----------------------------------------------------------------------
    def scope(self, allow: set[str] | None, deny: set[str], blacklist: set[str]) -> Scope:
        stem = self.path.stem
        if stem in self.plugin.platforms:
            folder = self.plugin.platforms[stem]
            if not self.dialect.one_vendor_folder:
                backends = None
            else:  # a platform whose names match no folder registers no vendor impl
                backends = {f"vendor/{folder}"} if folder else set()
            where = f"the {stem} platform"
        else:
            backends = None
            where = f"any platform (the file is loaded only through {self.dialect.config_env})"
        return Scope(where, backends, blacklist, allow or None, deny)

    def serves(self, impl: Impl, op: str, scope: Scope) -> bool:
        """Whether `impl` is a candidate for `op` on the scope's platform."""
        if impl.op is not None and impl.op != op:
            return False
        if impl.kind == "flagos":
            return not (self.plugin.flagos_filtered and op in scope.blacklist)
        if impl.kind == "vendor":
            if scope.vendor_backends is not None and impl.backend not in scope.vendor_backends:
                return False
            vendor = impl.vendor or ""
            return vendor not in scope.deny and (scope.allow is None or vendor in scope.allow)
        return True

    def check_op_backends(self, data: YDict, scope: Scope) -> None:
        table = data["op_backends"]
        if not isinstance(table, YDict):
            self.add("plugin-config-type", data.key_lines["op_backends"], f"op_backends is a "
                     f"{kind_of(table)}, not a mapping of op -> tokens: the plugin drops it "
                     "silently and every op uses the `prefer` order; write one `op: [tokens]` "
                     "line per op")
            return
        known_ops = self.plugin.ops()
        for key, line in table.key_lines.items():
            op = self.plugin.op_aliases.get(str(key), str(key))
            tokens = self.tokens(table[key], line, op)
            if tokens is None:
                continue
            if op not in known_ops and not self.plugin.dynamic():
                self.add("plugin-unknown-op", line, f"op {key!r} is registered by no backend, so "
                         f"this entry is never consulted{close(op, known_ops)}; fix the op name "
                         "or remove the entry")
                continue
            candidates = [i for i in self.plugin.impls if self.serves(i, op, scope)]
            matched = False
            for token, token_line in tokens:
                hits = [i for i in candidates if matches(i, token)]
                matched |= bool(hits)
                if token == "flagos" and not hits and op in scope.blacklist \
                        and self.plugin.flagos_filtered:
                    self.add("plugin-token-blacklisted", token_line, f"{op}: token flagos never "
                             "matches here, because flagos_blacklist lists the op and the plugin "
                             "drops its FlagGems implementation; remove the token or the "
                             "blacklist entry")
            if not matched and tokens:
                offered = sorted({spelled(i) for i in candidates})
                self.add("plugin-no-implementation", line, f"{op}: none of "
                         f"{', '.join(t for t, _ in tokens)} matches an implementation "
                         f"registered on {scope.platform}, so the plugin raises RuntimeError "
                         f"\"No implementation selected for op='{op}'\" at the op's first call "
                         f"on the device; use one of: {', '.join(offered) or 'none (register one)'}")

    def tokens(self, value: Any, line: int, op: str) -> list[tuple[str, int]] | None:
        """The tokens of one op entry with their lines; None when unusable (reported)."""
        if isinstance(value, str):
            parts = value.split("|") if self.dialect.split_string_tokens else [value]
            raw = [(p.strip(), line) for p in parts]
        elif isinstance(value, YList):
            raw = []
            for item, n in zip(value, value.item_lines, strict=True):
                if not isinstance(item, str):
                    self.add("plugin-list-type", n, f"{op}: token {item!r} is a {kind_of(item)}, "
                             "not a string: it never matches; write a token name")
                    continue
                raw.append((item.strip(), n))
        else:
            self.add("plugin-list-type", line, f"{op}: the value is a {kind_of(value)}, not a list "
                     "of tokens: the plugin drops the entry silently and uses the `prefer` order; "
                     "write a list of tokens")
            return None
        out = []
        for token, n in raw:
            if token:
                self.token_known(token, n, op)  # an unknown one stays: it matches nothing
                out.append((token, n))
        return out

    def token_known(self, token: str, line: int, op: str) -> bool:
        """Report a token the plugin cannot read; True for a well-formed one."""
        kind, _, name = token.partition(":")
        if token in PLAIN_TOKENS:
            return True
        if kind == "vendor" and name:
            vendors = self.plugin.vendors()
            if name in vendors:
                return True
            self.add("plugin-unknown-vendor", line, f"{op}: token {token!r} names vendor {name!r}, "
                     "which no backend registers, so it never matches and the plugin silently "
                     f"tries the next token; write vendor:{self.vendor_hint(name)}")
            return False
        if kind == "impl" and name:
            ids = {i.impl_id for i in self.plugin.impls if i.op in (op, None)}
            if name in ids or None in ids:
                return True
            self.add("plugin-unknown-token", line, f"{op}: no implementation of {op} has impl_id "
                     f"{name!r}, so token {token!r} never matches{close(name, ids - {None})}; "
                     "fix the impl id")
            return False
        self.add("plugin-unknown-token", line, f"{op}: unknown token {token!r}: it never matches "
                 f"and the plugin silently tries the next token{close(token, PLAIN_TOKENS)}"
                 "; write one of flagos, reference, vendor, vendor:<name>, impl:<impl_id>")
        return False

    def vendor_hint(self, name: str) -> str:
        """The registered vendor `name` most likely means: the vendor of the platform it
        names (`enflame` -> `gcu`), else of this file's platform, else the nearest spelling."""
        for platform in (name, self.path.stem):
            folder = self.plugin.platforms.get(platform)
            for impl in self.plugin.impls:
                if folder and impl.backend == f"vendor/{folder}" and impl.vendor:
                    return impl.vendor
        found = difflib.get_close_matches(name, sorted(self.plugin.vendors()), n=1, cutoff=0.6)
        return found[0] if found else "<a vendor some register_ops.py registers>"


def matches(impl: Impl, token: str) -> bool:
    """The plugins' match_token, on what the sources say (unknown parts match)."""
    kind, _, name = token.partition(":")
    if token in PLAIN_TOKENS:
        return impl.kind in (token, None)
    if kind == "vendor":
        return impl.kind in ("vendor", None) and impl.vendor in (name, None)
    if kind == "impl":
        return impl.impl_id in (name, None)
    return False


def spelled(impl: Impl) -> str:
    """The token that selects `impl` most precisely."""
    if impl.kind == "vendor" and impl.vendor:
        return f"vendor:{impl.vendor}"
    return impl.kind or f"impl:{impl.impl_id}"


def check_config(report: Report, sources: Sources, plugin: DispatchPlugin, path: Path) -> None:
    """All findings of one dispatch config file."""
    text = sources.text(path)
    if text is not None:
        ConfigCheck(report, plugin, path).run(text)
