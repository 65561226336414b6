"""One generated operator as its generator hands it over, and the files it becomes.

Payload (`DIR/<op>.json`): `{"op_name": "aten::gelu", "code": "<python + triton source>",
"test_func": "<pytest source>", "params": {}, "info": {"total": 10, "success": 10,
"failed": 0}}`. The operator's function is the one named like the aten operator (`gelu`), or
`params.entry`; other `params` keys that name schema arguments (`approximate`) are the values
the harness calls it with.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flagbot.kernels.intake.perfdata import DataError, op_key, read_json

# Generated sources are kept as written; the repository's linters and type checker skip them.
MODULE_HEADER = """\
# Generated operator {name} ({aten}), imported by `flagbot kernels import`.
# Source payload {source} (sha256 {digest}); generator {generator}.
# Provenance, accuracy and performance figures: ../_metadata.json. Edit the generator, not this.
# mypy: ignore-errors
# ruff: noqa
"""
# The test sees the operator module's names as its own: generated tests call the kernel's
# function directly, as they did beside the code in the payload. The module is loaded by path
# under a unique name, so an operator named like a standard module (`select`) shadows nothing.
TEST_HEADER = """\
# Test of the generated operator {name}, from its payload's test_func.
# mypy: ignore-errors
# ruff: noqa
import importlib.util as _ilu
import pathlib as _pl
import sys as _sys

_SPEC = _ilu.spec_from_file_location("flagbot_experimental_test_{slug}",
                                     _pl.Path(__file__).with_name("{module}"))
_MOD = _ilu.module_from_spec(_SPEC)
_sys.modules[_SPEC.name] = _MOD
_SPEC.loader.exec_module(_MOD)
globals().update({{k: v for k, v in vars(_MOD).items() if not k.startswith("__")}})
del _SPEC, _MOD

"""


@dataclass
class Payload:
    """A payload read from disk: where from, its digest, and its fields."""

    path: Path
    op_name: str
    code: str
    test_func: str
    params: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    generator: str = "unknown"
    digest: str = ""

    @property
    def entry(self) -> str:
        """The function the harness calls."""
        entry = self.params.get("entry")
        return str(entry) if entry else op_key(self.op_name).split(".")[0]

    def call_params(self) -> dict[str, Any]:
        """params minus the keys that describe the payload rather than a call."""
        return {k: v for k, v in self.params.items() if k not in ("entry", "generator")}


def load(path: Path, expected_op: str) -> Payload:
    """Read and check one payload file; raises DataError naming the file and field."""
    duplicates: list[str] = []
    raw = read_json(path, duplicates)
    if not isinstance(raw, dict):
        raise DataError(f"{path}: a payload is a JSON object")
    if duplicates:
        raise DataError(f"{path}: key {duplicates[0]!r} appears twice")
    for key in ("op_name", "code", "test_func"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise DataError(f"{path}: {key} must be a non-empty string")
    for key in ("params", "info"):
        if not isinstance(raw.get(key, {}), dict):
            raise DataError(f"{path}: {key} must be an object")
    base = op_key(raw["op_name"]).split(".")[0]
    if base != op_key(expected_op).split(".")[0]:
        raise DataError(f"{path}: op_name {raw['op_name']!r} is not the selected operator "
                        f"{expected_op!r}")
    params = dict(raw.get("params", {}))
    generator = str(raw.get("generator") or params.get("generator") or "unknown")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return Payload(path=path, op_name=raw["op_name"], code=raw["code"],
                   test_func=raw["test_func"], params=params, info=dict(raw.get("info", {})),
                   generator=generator, digest=digest)


def syntax_error(payload: Payload) -> str | None:
    """The code's or test's syntax error as one line (compiling never runs anything)."""
    for what, source in (("code", payload.code), ("test_func", payload.test_func)):
        try:
            compile(source, f"<{what}>", "exec", dont_inherit=True)
        except SyntaxError as exc:
            return f"{what} does not compile: {exc.msg} (line {exc.lineno})"
    return None


def module_text(payload: Payload, name: str, aten: str) -> str:
    """The operator module: a provenance header, then the generated code unchanged."""
    header = MODULE_HEADER.format(name=name, aten=aten, source=payload.path.name,
                                  digest=payload.digest[:16], generator=payload.generator)
    return header + "\n" + payload.code.rstrip() + "\n"


def test_text(payload: Payload, name: str, module: str) -> str:
    """The operator's test file: load the module by path, then the payload's test_func."""
    slug = "".join(c if c.isalnum() else "_" for c in name)
    return TEST_HEADER.format(name=name, slug=slug, module=module) + \
        payload.test_func.rstrip() + "\n"


def dumps(value: Any) -> str:
    """Stable JSON text (sorted keys, two-space indent, final newline)."""
    return json.dumps(value, indent=2, sort_keys=True) + "\n"
