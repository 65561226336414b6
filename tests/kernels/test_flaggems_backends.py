"""Backends as FlagGems ships them: the 5.0.2 `_nvidia` folder loaded the way FlagGems does."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from flagbot.kernels.cli import main
from flagbot.kernels.flaggems_names import BUNDLED, function_table, package_of, read_table
from flagbot.kernels.loader import BackendMissing, load_backend

ROOT = Path(__file__).resolve().parents[2]
TREE = ROOT / "testing" / "resources" / "real" / "flaggems-5.0.2" / "flag_gems"
NVIDIA = TREE / "runtime" / "backend" / "_nvidia"


@pytest.fixture(autouse=True, scope="module")
def _forget_the_stand_in_flaggems() -> Iterator[None]:
    """The extract's stand-in `flag_gems` must not become other tests' FlagGems baseline."""
    yield
    for name in [n for n in sys.modules if n == "flag_gems" or n.startswith("flag_gems.")]:
        del sys.modules[name]


def _statuses(arch: str | None = "9") -> dict[str, tuple[str | None, str | None]]:
    backend = load_backend(NVIDIA, arch=arch)
    return {op.function or op.name: (op.name, op.skip_status) for op in backend.ops}


def test_arch_folder_ops_join_the_vendor_ops_by_flaggems_names() -> None:
    ops = _statuses()
    assert ops["fill_scalar"] == ("fill", None) and ops["sqrt"] == ("sqrt", None)
    assert ops["mm"] == ("mm", None) and ops["mul"] == ("mul", None)
    assert ops["gelu"] == ("gelu", None)


def test_unused_op_is_disabled_not_gated() -> None:
    assert _statuses()["add"] == ("add", "disabled")


def test_variants_without_a_spec_are_listed_not_checked() -> None:
    ops = _statuses()
    assert ops["mm_out"] == ("mm_out", "not checked") and ops["sqrt_"][1] == "not checked"


def test_star_all_and_helpers_are_no_unknown_ops() -> None:
    backend = load_backend(NVIDIA, arch="hopper")
    assert not [op for op in backend.ops if op.error]
    assert {f["function"] for f in backend.not_operators} == {"fused_add_rms_norm",
                                                              "w8a8_block_fp8_matmul"}


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU's capability picks the folder")
def test_without_a_device_no_arch_is_picked_and_the_note_says_how() -> None:
    backend = load_backend(NVIDIA)
    assert backend.arch is None and "--arch" in (backend.arch_note or "")
    assert {op.function for op in backend.ops} == {"add", "gelu"}


def test_arch_environment_variable_picks_the_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARCH", "sm_90")
    assert load_backend(NVIDIA).arch == "hopper"


def test_arch_not_in_arch_map_is_a_usage_error() -> None:
    with pytest.raises(BackendMissing, match="ARCH_MAP"):
        load_backend(NVIDIA, arch="7")


def test_modules_get_flaggems_own_names() -> None:
    backend = load_backend(NVIDIA, arch="9")
    mm = next(op for op in backend.ops if op.function == "mm")
    assert mm.raw is not None and mm.raw.__module__ == "hopper.ops.mm"
    assert backend.flaggems == TREE


def test_operator_table_is_read_from_the_tree() -> None:
    table = read_table(TREE / "__init__.py")
    assert table["fill_scalar"] == ("fill.Scalar",) and package_of(NVIDIA) == TREE
    assert function_table(None)[0] == BUNDLED


def test_cli_checks_the_real_layout_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    # The tree's flag_gems is a stand-in whose ops refuse to run on a GPU, so a GPU times
    # against the bundled generic kernels; there a gate may fail on tiny shapes (exit 1).
    gpu = ["--baseline", "generic"] if torch.cuda.is_available() else []
    code = main(["check", "--backend", str(NVIDIA), "--arch", "9", "--shapes", "ci", "--seeds",
                 "1", "--dtypes", "fp32", "--ops", "add,sqrt,mm_out", "--json", str(out), *gpu])
    report = json.loads(out.read_text())
    verdicts = {op["op"]: op["verdict"]["status"] for op in report["ops"]}
    assert code == (1 if verdicts["sqrt"] == "fail" else 0)
    assert report["backend"]["arch"] == "hopper"
    assert verdicts["add"] == "disabled" and verdicts["mm_out"] == "not checked"
    assert verdicts["sqrt"] in ("unmeasured", "pass", "fail", "near")
