"""benchmarks/ptx_audit.py: the launches it records are the ones mm() makes, specialised as a
launch would be, and its report comes from real ahead-of-time compilation (in a process of its
own, without the interpreter)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
import torch

from flagbot.kernels.ops import mm as mm_module
from flagbot.kernels.spec import Case

from .benchmarks_support import BENCHMARKS, load_benchmark


@pytest.fixture(scope="module")
def audit() -> ModuleType:
    return load_benchmark("ptx_audit")


def test_capture_records_launches_without_computing_and_specialises_them(
        audit: ModuleType) -> None:
    kernel = mm_module._mm_kernel
    specs = audit.capture([("mm", Case((511, 129, 64)), torch.float16, "contiguous", "odd N"),
                           ("mm", Case((511, 129, 64)), torch.float16, "contiguous", "again"),
                           ("mm", Case((300, 256, 500)), torch.float32, "slice", "fp32 slice"),
                           ("softmax", Case((300, 1000)), torch.bfloat16, "contiguous", "sm"),
                           ("sum", Case((9328, 5782), {"dim": 0}), torch.bfloat16, "contiguous",
                            "cols")])
    assert mm_module._mm_kernel is kernel  # the real kernel is back
    by_rows = {(tuple(e["rows"]), e["spec"]["kernel"].split(":")[1]): e["spec"]
               for e in specs.values()}
    odd = by_rows[(("odd N", "again"), "_mm_kernel")]  # one launch, recorded for both rows
    assert odd["kernel"] == "flagbot.kernels.ops.mm:_mm_kernel" and odd["pointer"] == "*fp16"
    # integers equal to 1 become constants, multiples of 16 are marked, others are neither
    assert odd["constexprs"]["stride_bn"] == 1 and odd["constexprs"]["stride_ak"] == 1
    assert {"K", "stride_am"} <= set(odd["divisible"]) and "N" not in odd["divisible"]
    assert odd["constexprs"]["BLOCK_K"] == 64 and odd["warps"] in (4, 8)
    sliced = by_rows[(("fp32 slice",), "_mm_kernel")]
    # A's rows 500 + 64 apart, read in place (fp32, read twice): neither constant nor marked
    assert sliced["types"]["a_ptr"] == "*fp32" and "stride_am" not in sliced["divisible"]
    assert "stride_am" not in sliced["constexprs"] and "K" not in sliced["divisible"]
    softmax = [spec for (rows, _), spec in by_rows.items() if rows == ("sm",)]
    assert len(softmax) == 1 and softmax[0]["kernel"].startswith("flagbot.kernels.ops._rows:")
    assert softmax[0]["types"]["x_ptr"] == "*bf16"
    cols = [spec for (rows, _), spec in by_rows.items() if rows == ("cols",)]
    # split over R: the partial sums' launch too, reading fp32 buffers, scale an fp32
    assert any(spec["types"].get("x_ptr") == "*fp32" for spec in cols)
    assert all(spec["types"].get("scale") == "fp32" for spec in cols)


def test_the_report_comes_from_compiling_each_launch(tmp_path: Path) -> None:
    results = tmp_path / "rows.json"
    results.write_text(json.dumps({"rows": [
        {"op": "mm", "case": "511x129x64", "dtype": "float16", "layout": "contiguous",
         "vs_torch": 0.36},
        {"op": "mm", "case": "96x64x64", "dtype": "float16", "layout": "contiguous",
         "vs_torch": 1.2},
        {"op": "add", "case": "5x5", "dtype": "float16", "layout": "contiguous"}]}))
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run([sys.executable, str(BENCHMARKS / "ptx_audit.py"), "--results",
                           str(results), "--workers", "1", "--json", str(tmp_path / "a.json")],
                          capture_output=True, text=True, env=env, timeout=600)
    if done.returncode != 0 and "compile" in done.stderr.lower() and "ptxas" in done.stderr:
        pytest.skip("this Triton cannot compile ahead of time here")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "2 rows of mm, 2 distinct launches" in done.stderr
    report = json.loads((tmp_path / "a.json").read_text())
    assert len(report) == 2 and all(r["registers"] != 0 for r in report)
    odd = next(r for r in report if "mm 511x129x64 float16 contiguous 0.36x" in r["rows"])
    even = next(r for r in report if r is not odd)
    # 129 output columns: 2-byte stores, named in the table; 64: 16-byte ones, left out of it
    assert odd["narrow_stores"] > 0 and even["narrow_stores"] == 0
    assert even["wide_accesses"] > 0
    assert "mm 511x129x64 float16 contiguous 0.36x" in done.stdout
    assert "96x64x64" not in done.stdout


def test_a_launch_that_does_not_compile_is_named_and_fails_the_run(
        audit: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "rows.json"
    results.write_text(json.dumps({"rows": [
        {"op": "mm", "case": "5x5x5", "dtype": "float16", "layout": "contiguous",
         "vs_torch": 1.0}]}))
    bogus = {"spec": {"kernel": "flagbot.kernels.ops.mm:_no_such_kernel", "pointer": "*fp16",
                      "warps": 4, "stages": 3, "constexprs": {}, "divisible": []},
             "rows": ["mm 5x5x5 float16 contiguous 1.00x"]}
    monkeypatch.setattr(audit, "capture", lambda rows: (list(rows), {"bogus": bogus})[1])
    assert audit.main(["--results", str(results), "--workers", "1"]) == 1
    err = capsys.readouterr().err
    named = [line for line in err.splitlines() if "_no_such_kernel" in line]
    assert len(named) == 1 and "did not compile" in named[0] and "mm 5x5x5" in named[0]
    assert "1 launches did not compile" in err


def test_bad_arguments_are_refused_with_what_to_fix(audit: ModuleType, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    for argv, said in ((["--results", str(tmp_path / "none.json")], "no such file"),
                       (["--ops", "mm,conv"], "conv not among")):
        with pytest.raises(SystemExit) as exit_info:
            audit.main(argv)
        assert exit_info.value.code == 2 and said in capsys.readouterr().err


def test_launches_through_descriptors_are_recorded_as_on_sm_90(
        audit: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    # whatever this host's target (here one without descriptors), the audit records what an
    # sm_90 launch makes: 16-bit tiles go through descriptors, typed so that they compile
    # ahead of time; fp32 tiles never ask for them
    def no_tma() -> bool:
        return False

    monkeypatch.setattr(mm_module._mm_tma, "target_has_tma", no_tma)
    specs = audit.capture([("mm", Case((1024, 4096, 1024)), torch.bfloat16, "contiguous",
                            "big"),
                           ("mm", Case((4096, 4096, 4096)), torch.float32, "contiguous", "fp32")])
    kernels = {e["rows"][0]: e["spec"] for e in specs.values()}
    big = kernels["big"]
    assert big["kernel"] == "flagbot.kernels.ops._mm_tma:_mm_tma_kernel"
    assert big["types"]["a_desc"] == "tensordesc<bf16[128, 64]>"
    assert big["types"]["b_desc"] == "tensordesc<bf16[64, 256]>"
    assert kernels["fp32"]["kernel"] == "flagbot.kernels.ops.mm:_mm_kernel"
    assert mm_module._mm_tma.target_has_tma is no_tma  # put back
