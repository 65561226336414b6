"""`--baseline`: FlagGems' own op when flag_gems imports, else the generic kernel, recorded."""

from __future__ import annotations

import json
import types
from pathlib import Path
from typing import Any

import pytest
import torch

from flagbot.kernels import baseline
from flagbot.kernels.baseline import Baseline, BaselineUnavailable, flaggems_ops, resolve
from flagbot.kernels.check import CheckOptions, Run, check_backend_op
from flagbot.kernels.cli import main
from flagbot.kernels.device import resolve as resolve_device
from flagbot.kernels.loader import Backend
from flagbot.kernels.registry import OPS


def _fake_flaggems() -> Any:
    calls: list[tuple[Any, ...]] = []

    def softmax(x: torch.Tensor, dim: int, half_to_float: bool) -> torch.Tensor:
        calls.append(("_softmax", dim, half_to_float))
        return torch.softmax(x, dim)

    def layer_norm(x: torch.Tensor, shape: list[int], w: Any, b: Any, eps: float) -> Any:
        calls.append(("native_layer_norm", shape, eps))
        return torch.nn.functional.layer_norm(x, shape, w, b, eps), None, None

    module = types.SimpleNamespace(__version__="9.9.9", calls=calls, _FULL_CONFIG=(
        ("_softmax", softmax),
        ("native_layer_norm", layer_norm),
        ("mm", torch.mm, lambda: False),  # condition false: FlagGems would not register it
    ))
    return module


def test_generic_is_the_bundled_library() -> None:
    base = resolve("generic")
    assert (base.name, base.to_json()["requested"]) == ("generic", "generic")
    assert base.for_spec(OPS["softmax"]) == ("generic", OPS["softmax"].generic)


def test_auto_falls_back_to_generic_and_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(baseline, "_import_flaggems", lambda: (None, "ModuleNotFoundError: x"))
    base = resolve("auto")
    assert base.name == "generic" and "ModuleNotFoundError" in str(base.note)


def test_explicit_flaggems_that_does_not_import_is_an_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(baseline, "_import_flaggems", lambda: (None, "RuntimeError: no GPU"))
    with pytest.raises(BaselineUnavailable, match="no GPU"):
        resolve("flaggems")


def test_flaggems_functions_are_wrapped_to_the_generic_signatures(
        monkeypatch: pytest.MonkeyPatch) -> None:
    module = _fake_flaggems()
    monkeypatch.setattr(baseline, "_import_flaggems", lambda: (module, None))
    base = resolve("auto")
    assert (base.name, base.version, sorted(base.ops)) == ("flaggems", "9.9.9",
                                                           ["layer_norm", "softmax"])
    x = torch.randn(3, 5)
    torch.testing.assert_close(base.ops["softmax"](x, 0), torch.softmax(x, 0))
    out = base.ops["layer_norm"](x, (5,), None, None, 1e-5)
    assert isinstance(out, torch.Tensor) and out.shape == x.shape
    assert module.calls == [("_softmax", 0, False), ("native_layer_norm", [5], 1e-5)]
    # FlagGems without an op: the override is gated against the generic kernel, and says so.
    assert base.for_spec(OPS["mm"]) == ("generic", OPS["mm"].generic)
    assert flaggems_ops(types.SimpleNamespace()) == {}


def test_check_records_the_baseline_of_each_override(nvidia: Backend,
                                                     device: torch.device) -> None:
    fake = Baseline("flaggems", "9.9.9", "flaggems", {"softmax": torch.softmax})
    op = next(o for o in nvidia.ops if o.name == "softmax")
    entry = check_backend_op(op, CheckOptions(shapes="ci", seeds=(0,)),
                             Run(resolve_device(str(device)), "not timed here"), fake)
    assert entry["baseline"] == "flaggems"
    assert entry["accuracy"]["status"] == "pass"


def test_cli_flaggems_unavailable_exits_two(planted_dir: Path, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(baseline, "_import_flaggems", lambda: (None, "ImportError: none"))
    code = main(["check", "--backend", str(planted_dir / "_planted"), "--baseline", "flaggems",
                 "--shapes", "ci", "--ops", "add"])
    assert code == 2


def test_report_records_baseline_name_and_version(planted_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    main(["check", "--backend", str(planted_dir / "_planted"), "--baseline", "generic",
          "--shapes", "ci", "--ops", "add", "--seeds", "1", "--json", str(out)])
    report = json.loads(out.read_text())
    assert report["options"]["baseline"] == "generic"
    assert report["baseline"]["name"] == "generic" and report["baseline"]["version"]
    assert report["ops"][0]["baseline"] == "generic"


def test_importing_flaggems_leaves_backend_utils_as_it_was(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib
    import sys

    ours = sys.modules.get("backend_utils")

    def fake_import(name: str) -> Any:
        sys.modules["backend_utils"] = types.ModuleType("backend_utils")  # FlagGems' own
        return types.SimpleNamespace(__version__="1")

    monkeypatch.setattr(importlib, "import_module", fake_import)
    module, _ = baseline._import_flaggems()
    assert module is not None and sys.modules.get("backend_utils") is ours
