"""Timing data of generated operators: read, check and merge the files generators write.

Format (times in milliseconds), one file or two:
`{"<op>": {"configs": [{"shape": [256, 256], "dtype": "float32", "your_time": 0.5,
"cuda_time": 1.0}]}}`; the second file (`--flaggems-data`) has the same shape with
`flaggems_time`. Configs are matched between files by exact (shape, dtype). Pure data work: no
torch here, so it runs on the light core install.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

TIME_KEYS = ("your_time", "cuda_time", "flaggems_time")
DTYPES = {"float32": "float32", "fp32": "float32", "float": "float32", "float16": "float16",
          "fp16": "float16", "half": "float16", "bfloat16": "bfloat16", "bf16": "bfloat16",
          "float64": "float64", "fp64": "float64", "double": "float64", "int8": "int8",
          "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8", "bool": "bool",
          "complex64": "complex64"}
# Outside these bounds a time is more likely in the wrong unit than real: no kernel launch
# takes under 0.1 us, and a generated kernel timed for over 10 s per call is not benchmarked.
PLAUSIBLE_MS = (1e-4, 1e4)

Shape = tuple[Any, ...]  # ints, or tuples of ints for operators with several input shapes


class DataError(Exception):
    """A file that cannot be read (the message names it): a usage error."""


class BadJson(DataError):
    """A file that is not JSON: the data failed the check."""


@dataclass(frozen=True)
class Config:
    """One measured (shape, dtype) of one operator; times in milliseconds, None if absent."""

    shape: Shape
    dtype: str
    your_time: float | None = None
    cuda_time: float | None = None
    flaggems_time: float | None = None

    @property
    def key(self) -> tuple[Shape, str]:
        return self.shape, self.dtype

    @property
    def label(self) -> str:
        return f"shape {list_shape(self.shape)} {self.dtype}"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"shape": list_shape(self.shape), "dtype": self.dtype}
        out.update({k: getattr(self, k) for k in TIME_KEYS if getattr(self, k) is not None})
        return out


@dataclass
class Validation:
    """Merged operators (name -> configs), and what was wrong or doubtful, one line each."""

    ops: dict[str, list[Config]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    matched: dict[str, int] = field(default_factory=dict)  # op -> configs with flaggems_time

    @property
    def ok(self) -> bool:
        return not self.errors


def list_shape(shape: Shape) -> list[Any]:
    """A shape tuple as the JSON list it came from."""
    return [list_shape(s) if isinstance(s, tuple) else s for s in shape]


def op_key(name: str) -> str:
    """`aten::gelu` and `gelu` name one operator."""
    return name.removeprefix("aten::")


def read_json(path: Path, duplicates: list[str]) -> Any:
    """Parse `path`; every key repeated inside one JSON object is appended to `duplicates`."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in items:
            if key in seen:
                duplicates.append(key)
            seen[key] = value
        return seen

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DataError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    try:
        return json.loads(text, object_pairs_hook=pairs)
    except json.JSONDecodeError as exc:
        raise BadJson(f"{path}: not JSON: {exc.msg} at line {exc.lineno} column "
                        f"{exc.colno}") from exc


def _shape(value: Any) -> Shape | None:
    if not isinstance(value, list) or not value:
        return None
    if all(isinstance(v, list) for v in value):
        inner = [_shape(v) for v in value]
        return None if any(s is None for s in inner) else tuple(inner)
    if all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value):
        return tuple(value)
    return None


def _time(where: str, key: str, value: Any, errors: list[str]) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        errors.append(f"{where}: {key} must be a number of milliseconds, got {value!r}")
        return None
    if value <= 0:
        errors.append(f"{where}: {key} is {value}: times must be positive milliseconds")
        return None
    return float(value)


def parse_config(where: str, raw: Any, errors: list[str], warnings: list[str]) -> Config | None:
    """One config entry, or None after appending why it is unusable."""
    if not isinstance(raw, dict):
        errors.append(f"{where}: a config is an object with shape, dtype and times")
        return None
    shape = _shape(raw.get("shape"))
    dtype = DTYPES.get(str(raw.get("dtype", "")).removeprefix("torch."))
    if shape is None:
        errors.append(f"{where}: shape must be a list of positive integers (or of such lists), "
                      f"got {raw.get('shape')!r}")
    if dtype is None:
        errors.append(f"{where}: dtype {raw.get('dtype')!r} is not one of "
                      f"{', '.join(sorted(set(DTYPES.values())))}")
    unknown = sorted(set(raw) - {"shape", "dtype", *TIME_KEYS})
    if unknown:
        warnings.append(f"{where}: ignored keys {', '.join(unknown)}")
    before = len(errors)
    times = {k: _time(where, k, raw.get(k), errors) for k in TIME_KEYS}
    if shape is None or dtype is None or len(errors) > before:
        return None
    return Config(shape=shape, dtype=dtype, **times)


def parse_file(path: Path, label: str, result: Validation) -> dict[str, list[Config]]:
    """Operators of one file (`label` names it in messages); problems go into `result`."""
    duplicates: list[str] = []
    data = read_json(path, duplicates)
    errors, warnings = result.errors, result.warnings
    for key in sorted(set(duplicates)):
        errors.append(f"{label}: key {key!r} appears twice in one object; JSON keeps only the "
                      "last, so one of them is silently lost: merge or rename them")
    if not isinstance(data, dict):
        errors.append(f"{label}: the top level must map operator names to {{\"configs\": [...]}}")
        return {}
    ops: dict[str, list[Config]] = {}
    for name, entry in data.items():
        op = op_key(name)
        if op in ops:
            errors.append(f"{label}: operator {op!r} is listed twice (as {name!r} too)")
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("configs"), list):
            errors.append(f"{label}: {name}: expected {{\"configs\": [...]}}")
            continue
        configs: list[Config] = []
        seen: set[tuple[Shape, str]] = set()
        for i, raw in enumerate(entry["configs"]):
            where = f"{label}: {op} config {i}"
            config = parse_config(where, raw, errors, warnings)
            if config is None:
                continue
            if config.key in seen:
                errors.append(f"{where}: {config.label} is listed twice for {op}")
                continue
            seen.add(config.key)
            configs.append(config)
        if not entry["configs"]:
            errors.append(f"{label}: {op}: no configs")
        ops[op] = configs
    return ops


def _merge_op(op: str, configs: list[Config], theirs: list[Config] | None,
              result: Validation) -> list[Config]:
    by_key = {c.key: c for c in theirs or []}
    merged: list[Config] = []
    for config in configs:
        other = by_key.pop(config.key, None)
        time = config.flaggems_time
        if other is not None and other.flaggems_time is not None:
            if time is not None and time != other.flaggems_time:
                result.errors.append(f"{op} {config.label}: flaggems_time {time} in --your-data "
                                     f"but {other.flaggems_time} in --flaggems-data; keep one")
            time = other.flaggems_time
        merged.append(replace(config, flaggems_time=time))
    if theirs is not None:
        matched = sum(c.flaggems_time is not None for c in merged)
        if theirs and matched == 0:
            mine = ", ".join(c.label for c in configs[:3]) or "none"
            other_labels = ", ".join(c.label for c in theirs[:3])
            result.errors.append(f"{op}: no config matches --flaggems-data by exact (shape, "
                                 f"dtype): yours {mine}; flaggems {other_labels}")
        else:
            for config in merged:
                if config.flaggems_time is None:
                    result.warnings.append(f"{op} {config.label}: no flaggems_time for it in "
                                           "--flaggems-data; it cannot count in batch 1")
            for config in by_key.values():
                result.warnings.append(f"{op} {config.label}: in --flaggems-data only; ignored")
    return merged


def _check_times(op: str, config: Config, result: Validation) -> None:
    where = f"{op} {config.label}"
    if config.your_time is None:
        result.errors.append(f"{where}: your_time is missing")
    if config.cuda_time is None and config.flaggems_time is None:
        result.errors.append(f"{where}: no baseline: give cuda_time (native torch) or "
                             "flaggems_time (the existing kernel)")
    low, high = PLAUSIBLE_MS
    for key in TIME_KEYS:
        value = getattr(config, key)
        if value is not None and not low <= value <= high:
            unit = "seconds" if value < low else "microseconds"
            result.warnings.append(f"{where}: {key} {value} ms is implausible for a kernel; "
                                   f"are these {unit}? times are milliseconds")
    for key in ("cuda_time", "flaggems_time"):
        base = getattr(config, key)
        if config.your_time is not None and base is not None and \
                not 1e-3 <= base / config.your_time <= 1e3:
            result.warnings.append(f"{where}: your_time {config.your_time} vs {key} {base} "
                                   "differ more than 1000x: mixed units?")


def validate(your_data: Path, flaggems_data: Path | None = None) -> Validation:
    """Read, check and merge the files; raises DataError only for unreadable files."""
    result = Validation()
    yours = parse_file(your_data, str(your_data), result)
    theirs: dict[str, list[Config]] = {}
    if flaggems_data is not None:
        theirs = parse_file(flaggems_data, str(flaggems_data), result)
        for op, configs in theirs.items():
            for config in configs:
                if config.flaggems_time is None:
                    result.errors.append(f"{flaggems_data}: {op} {config.label}: "
                                         "flaggems_time is missing")
        for op in sorted(set(theirs) - set(yours)):
            result.warnings.append(f"{op}: in --flaggems-data only; ignored")
    for op, configs in yours.items():
        merged = _merge_op(op, configs, theirs.get(op) if flaggems_data else None, result)
        for config in merged:
            _check_times(op, config, result)
        result.ops[op] = merged
        result.matched[op] = sum(c.flaggems_time is not None for c in merged)
    return result


def summary(result: Validation) -> str:
    """One paragraph: operators, configs, what matched, how many problems."""
    configs = sum(len(c) for c in result.ops.values())
    with_fg = [op for op, n in result.matched.items() if n]
    lines = [f"{len(result.ops)} operators, {configs} configs; "
             f"{len(with_fg)} operators ({sum(result.matched.values())} configs) have "
             f"flaggems_time (batch 1 candidates), "
             f"{sum(1 for c in result.ops.values() if any(x.cuda_time for x in c))} have cuda_time "
             "(batch 2 candidates)",
             f"{len(result.errors)} errors, {len(result.warnings)} warnings"]
    return "\n".join(lines)


def lines(prefix: str, items: Iterable[str]) -> list[str]:
    """`prefix: item` for each item (the CLI prints errors and warnings this way)."""
    return [f"{prefix}: {item}" for item in items]
