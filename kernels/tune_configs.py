"""One reading of `tune_configs.yaml` for the backend checker and the kernel harness.

`read_tune` parses a file (as `yaml.safe_load` would, see kernels/yamlload.py) and lists its
problems, each tagged with the checker rule id that reports it; `expand` turns one op's
entries into plain config dicts; `load_backend_tunes` reads every tune file of a backend
folder and raises on the first unusable one, as `import flag_gems` does. The checker turns
the problems into findings with these lines and messages, so both sides agree on every file.
Standard library and PyYAML only (no torch, no triton).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from flagbot.kernels.flaggems_layout import (
    ENTRY_KEYS,
    GEN,
    LAUNCH_DEFAULTS,
    LAUNCH_KEYS,
    META,
    PARAM_MAP,
    TUNE_FILE,
    tune_files,
)
from flagbot.kernels.yamlload import YDict, load_yaml

# Rule ids, as hooks/backend/rules.py names them.
SYNTAX = "yaml-syntax"
DUPLICATE = "yaml-duplicate-key"
SCHEMA = "tune-schema"
UNKNOWN_KEY = "tune-unknown-key"  # the only one that does not stop FlagGems from loading
MISSING = "required-file"


@dataclass(frozen=True)
class TuneProblem:
    """One problem in a tune file: checker rule id, 1-based line (0: the file), message."""

    rule: str
    line: int
    message: str

    @property
    def fatal(self) -> bool:
        """True when FlagGems (and the harness) cannot load the file because of it."""
        return self.rule != UNKNOWN_KEY


@dataclass
class TuneFile:
    """A parsed tune file: op -> entries (empty if unreadable), op key lines, problems."""

    data: dict[str, Any] = field(default_factory=dict)
    keys: dict[str, int] = field(default_factory=dict)
    problems: list[TuneProblem] = field(default_factory=list)

    @property
    def errors(self) -> list[TuneProblem]:
        return [p for p in self.problems if p.fatal]


class TuneConfigError(ValueError):
    """Tune files that cannot become triton.Configs; `problems` holds (source, problem)."""

    def __init__(self, problems: list[tuple[str, TuneProblem]]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{source}:{p.line}: {p.message}" if p.line else
                                   f"{source}: {p.message}" for source, p in problems))


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def launch_problem(key: str, value: Any) -> str | None:
    """Why `value` is not a valid `key` launch parameter, or None."""
    if key == "maxnreg" and value is None:
        return None
    if not _is_int(value):
        return f"{key} must be an integer, got {value!r}"
    if key == "num_warps" and (value <= 0 or value & (value - 1)):
        return f"num_warps must be a power of two, got {value}"
    if key in ("num_ctas", "maxnreg") and value <= 0:
        return f"{key} must be positive, got {value}"
    if value < 0:
        return f"{key} must not be negative, got {value}"
    return None


def _line(container: Any, key: Any, default: int) -> int:
    if isinstance(container, YDict):
        return container.key_lines.get(key, container.line)
    return default


def _own_line(container: Any, default: int) -> int:
    return getattr(container, "line", 0) or default


class _Checker:
    """Collects the problems of one op's entries."""

    def __init__(self, op: str) -> None:
        self.op = op
        self.problems: list[TuneProblem] = []

    def add(self, rule: str, line: int, message: str) -> None:
        self.problems.append(TuneProblem(rule, line, f"{self.op}: {message}"))

    def unknown(self, key: Any, line: int) -> None:
        self.add(UNKNOWN_KEY, line, f"key {key!r} is ignored by FlagGems' config loader (it "
                 f"reads {', '.join(ENTRY_KEYS)}); remove it or pass it another way")

    def explicit(self, entry: dict[Any, Any], at: int) -> None:
        line = _own_line(entry, at)
        if not isinstance(entry.get(META), dict):
            self.add(SCHEMA, line, "an explicit entry needs a META mapping (constexpr name -> "
                     "value); use `gen: true` + param_map for a generator")
        elif not all(isinstance(k, str) for k in entry[META]):
            self.add(SCHEMA, line, "META keys must be constexpr names")
        for key, value in entry.items():
            if key not in ENTRY_KEYS:
                self.unknown(key, _line(entry, key, line))
            elif key != META and (problem := launch_problem(key, value)):
                self.add(SCHEMA, _line(entry, key, line), problem)

    def values(self, entry: dict[Any, Any], pkey: str, ref: Any, line: int) -> list[Any]:
        """What a param_map value iterates: a sibling list it names, an inline list, an int."""
        if isinstance(ref, str):
            target = entry.get(ref)
            if not isinstance(target, list) or not target:
                self.add(SCHEMA, line, f"param_map {pkey} names {ref!r}, which is not a "
                         "non-empty list beside param_map")
                return []
            return list(target)
        if isinstance(ref, list):
            if not ref:
                self.add(SCHEMA, line, f"param_map {pkey} is an empty list")
            return list(ref)
        if pkey == META:
            self.add(SCHEMA, line, "param_map META must be a mapping, a list name or a list "
                     "of mappings")
            return []
        if not isinstance(ref, int):  # FlagGems looks any other value up as a list name
            self.add(SCHEMA, line, f"param_map {pkey} must name a list, be a list or an "
                     f"integer, got {ref!r}")
            return []
        return [ref]

    def generator(self, entry: dict[Any, Any], at: int) -> None:
        line = _own_line(entry, at)
        if entry[GEN] is not True:
            self.add(SCHEMA, _line(entry, GEN, line), "gen must be true")
        pmap = entry.get(PARAM_MAP)
        if not isinstance(pmap, dict):
            self.add(SCHEMA, line, "a generator entry needs a param_map mapping")
            return
        for pkey, ref in pmap.items():
            at_key = _line(pmap, pkey, line)
            if pkey == META and isinstance(ref, dict):
                for const, sub in ref.items():
                    self.values(entry, f"META.{const}", sub, _line(ref, const, at_key))
                continue
            items = self.values(entry, str(pkey), ref, at_key)
            if pkey not in ENTRY_KEYS:
                self.unknown(f"{PARAM_MAP}.{pkey}", at_key)
                continue
            for value in items:
                problem = launch_problem(pkey, value) if pkey != META else (
                    None if isinstance(value, dict) else
                    f"META list items must be mappings, got {value!r}")
                if problem:
                    name = f"{ref}: " if isinstance(ref, str) else ""
                    self.add(SCHEMA, at_key, f"{name}{problem}")

    def entries(self, entries: Any, line: int) -> None:
        if not isinstance(entries, list) or not entries:
            self.add(SCHEMA, line, "must be a non-empty list of config entries")
            return
        lines = getattr(entries, "item_lines", [line] * len(entries))
        for entry, at in zip(entries, lines, strict=False):
            if not isinstance(entry, dict):
                self.add(SCHEMA, at, "each entry must be a mapping")
            elif GEN in entry:  # FlagGems tests the key, not its value
                self.generator(entry, at)
            else:
                self.explicit(entry, at)


def check_entries(op: str, entries: Any, line: int = 0) -> list[TuneProblem]:
    """Every problem in one op's list of entries."""
    checker = _Checker(op)
    checker.entries(entries, line)
    return checker.problems


def read_tune(text: str) -> TuneFile:
    """Parse and check the text of a tune file."""
    loaded = load_yaml(text)
    if loaded.error is not None:
        line, msg = loaded.error
        return TuneFile(problems=[TuneProblem(SYNTAX, line, f"not valid YAML: {msg}")])
    tune = TuneFile(problems=[
        TuneProblem(DUPLICATE, line, f"duplicate key {what}; YAML loaders keep only the last "
                    "one, silently dropping the other") for line, what in loaded.duplicates])
    data = loaded.data
    if not isinstance(data, YDict):
        tune.problems.append(TuneProblem(SCHEMA, 1, "the file must be a mapping of op key -> "
                                         "list of configs"))
        return tune
    for op, line, entries in data.dropped:
        hidden = f" (in the first `{op}` block, line {line}, which the duplicate key hides)"
        tune.problems.extend(replace(p, message=p.message + hidden)
                             for p in check_entries(str(op), entries, line))
    for op, entries in data.items():
        line = _line(data, op, 1)
        tune.problems.extend(check_entries(str(op), entries, line))
        tune.data[str(op)] = entries
        tune.keys[str(op)] = line
    return tune


def _choices(entry: dict[str, Any], ref: Any) -> list[Any]:
    if isinstance(ref, str):
        return list(entry[ref])
    return list(ref) if isinstance(ref, list) else [ref]


def _generated(entry: dict[str, Any]) -> list[dict[str, Any]]:
    pmap = entry[PARAM_MAP]
    meta_ref = pmap[META]
    if isinstance(meta_ref, dict):
        names = list(meta_ref)
        metas = [dict(zip(names, combo, strict=True)) for combo in
                 itertools.product(*(_choices(entry, meta_ref[n]) for n in names))]
    else:
        metas = [dict(m) for m in _choices(entry, meta_ref)]
    keys = [k for k in pmap if k in LAUNCH_KEYS]  # other keys have no effect in FlagGems
    out = []
    for meta in metas:
        for combo in itertools.product(*(_choices(entry, pmap[k]) for k in keys)):
            out.append({META: meta, **LAUNCH_DEFAULTS, **dict(zip(keys, combo, strict=True))})
    return out


def expand(op: str, entries: Any, source: str = TUNE_FILE) -> list[dict[str, Any]]:
    """The {META, num_warps, ...} dicts one op's entries stand for; TuneConfigError if broken."""
    errors = [p for p in check_entries(op, entries) if p.fatal]
    if errors:
        raise TuneConfigError([(source, p) for p in errors])
    out: list[dict[str, Any]] = []
    for entry in entries:
        if GEN in entry:
            out.extend(_generated(entry))
        else:
            out.append({META: dict(entry[META]),
                        **{k: entry.get(k, LAUNCH_DEFAULTS[k]) for k in LAUNCH_KEYS}})
    return out


def read_tune_path(path: Path) -> TuneFile:
    """`read_tune` of the file at `path` (read as the checker reads it)."""
    return read_tune(path.read_text(encoding="utf-8", errors="replace"))


def load_tune_file(path: Path, source: str | None = None) -> dict[str, list[dict[str, Any]]]:
    """Every op of the tune file at `path`, expanded; TuneConfigError names each fatal problem."""
    source = source or str(path)
    try:
        tune = read_tune_path(path)
    except OSError as exc:
        raise TuneConfigError([(source, TuneProblem(MISSING, 0, f"cannot be read: {exc}"))]) \
            from exc
    if tune.errors:
        raise TuneConfigError([(source, p) for p in tune.errors])
    return {op: expand(op, entries, source) for op, entries in tune.data.items()}


def load_backend_tunes(folder: Path) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Every tune file of the backend at `folder` (relative path -> op -> configs).

    FlagGems converts the vendor file at import and an arch folder's when that arch is
    selected; this loads all of them, so a file is accepted or rejected on any machine.
    """
    loaded: dict[str, dict[str, list[dict[str, Any]]]] = {}
    problems: list[tuple[str, TuneProblem]] = []
    for path in tune_files(folder):
        rel = path.relative_to(folder).as_posix()
        if not path.is_file():
            problems.append((rel, TuneProblem(MISSING, 0, f"missing; FlagGems needs {TUNE_FILE} "
                                              "in every vendor folder")))
            continue
        try:
            loaded[rel] = load_tune_file(path, rel)
        except TuneConfigError as exc:
            problems.extend(exc.problems)
    if problems:
        raise TuneConfigError(problems)
    return loaded
