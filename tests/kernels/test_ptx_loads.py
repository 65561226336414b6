"""What the compiler makes of the generic kernels' loads, checked without a GPU: the kernels are
compiled ahead of time for an sm_90 target (Triton's own compiler and the ptxas its wheel
ships, in a process of its own: benchmarks/aot_ptx.py) and the PTX is read. The interpreter
cannot show this, and it decides speed: mm with a load bound of 1080 ran at 0.13x torch on an
H100 while its loads were 2-byte scalars.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from flagbot.kernels.ops._rows import alignment

HERE = Path(__file__).resolve().parent
BENCHMARKS = HERE.parent.parent / "benchmarks"


def _mm(bound_alignment: int) -> dict[str, Any]:
    # 512x1080x1176 bf16, both row-major: B's rows are 1080 elements (16-byte aligned), the
    # N bound 1080 a multiple of 8; `alignment` is what mm() passes for them.
    return {"kernel": "flagbot.kernels.ops.mm:_mm_kernel", "pointer": "*bf16",
            "warps": 4, "stages": 4, "constexprs": {
                "stride_ak": 1, "stride_bn": 1, "stride_cn": 1, "stride_cs": 0, "BLOCK_M": 64,
                "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "DOT_PRECISION": "tf32",
                "ALIGN_AM": alignment(1176), "ALIGN_AK": 1, "ALIGN_BK": alignment(1080),
                "ALIGN_BN": 1, "ALIGN_ML": alignment(512), "ALIGN_NL": bound_alignment,
                "NO_TAIL": False}}


def _gemv(split: bool) -> dict[str, Any]:
    # 1x8191x4384 fp16: the matrix's rows run along N (stride 1), K rows 8191 apart
    return {"kernel": "flagbot.kernels.ops.mm:_gemv_kernel", "pointer": "*fp16",
            "warps": 4, "stages": 3, "constexprs": {
                "stride_r": 1, "stride_v": 1, "stride_o": 1, "BLOCK_R": 32, "BLOCK_K": 256,
                "ALIGN_R": 16, "ALIGN_K": alignment(8191), "SPLIT": split}}


def _sum_cols(align: int) -> dict[str, Any]:
    # mean over dim 1 of a 512x127x1024 bf16 slice of rows 1064 wide, read in place: rows of
    # the reduced dim 1064 apart (16-byte aligned, which Triton cannot see: 1064 is not a
    # multiple of 16), outer slices 127 * 1064 apart; 1024 columns, which Triton marks as a
    # multiple of 16 itself.
    return {"kernel": "flagbot.kernels.ops._reduce:_sum_cols_kernel", "pointer": "*bf16",
            "warps": 8, "stages": 3, "divisible": ["inner", "outer_total"], "constexprs": {
                "BLOCK_R": 2, "BLOCK_I": 256, "ALIGN": align}}


def _softmax_long(align: int) -> dict[str, Any]:
    # 4096x50257 bf16 softmax rows 50264 apart (a slice): the looped long-row kernel, whose
    # output pass is the helper it shares with the split kernels
    return {"kernel": "flagbot.kernels.ops._rows:_softmax_long_kernel", "pointer": "*bf16",
            "warps": 16, "stages": 3, "constexprs": {"LOG": False, "BLOCK_N": 8192,
                                                      "ALIGN": align}}


@pytest.fixture(scope="module")
def ptx() -> dict[str, str]:
    specs = {"mm_stated": _mm(alignment(1080)), "mm_bare": _mm(1),
             "gemv_unsplit": _gemv(False), "gemv_split": _gemv(True),
             "sum_stated": _sum_cols(alignment(1064, 127 * 1064)), "sum_bare": _sum_cols(1),
             "long_stated": _softmax_long(alignment(50264)), "long_bare": _softmax_long(1)}
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run([sys.executable, str(BENCHMARKS / "aot_ptx.py")], input=json.dumps(
        list(specs.values())), capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    if isinstance(out, dict):
        pytest.skip(out["skip"])
    return dict(zip(specs, out, strict=True))


def _async_copies(text: str) -> Counter[str]:
    """Asynchronous global-to-shared copies by size in bytes."""
    return Counter(re.findall(
        r"cp\.async\.\w+\.shared\.global\s*\[[^]]*\],\s*\[[^]]*\],\s*(\w+)", text))


def test_mm_loads_are_16_byte_copies_once_the_bounds_alignment_is_stated(
        ptx: dict[str, str]) -> None:
    assert alignment(1080) == 8
    stated = _async_copies(ptx["mm_stated"])
    assert stated.get("0x10", 0) > 0, stated  # the tiles come in as 16-byte copies
    # what the compiler sees of a bare bound of 1080: every load a 2-byte scalar (0.13x torch)
    assert not _async_copies(ptx["mm_bare"]).get("0x10")
    assert "ld.global.v4" not in ptx["mm_bare"]


def test_unsplit_gemv_does_not_read_the_split_index(ptx: dict[str, str]) -> None:
    # Computed from the program id even unsplit, K's start cost 1x8191x4384 fp16 33x its time
    # on an H100; unsplit, the kernel must not depend on the grid's second axis at all.
    assert "%ctaid.y" not in ptx["gemv_unsplit"]
    assert "%ctaid.y" in ptx["gemv_split"]


def test_strided_column_sums_load_vectors_once_the_strides_alignment_is_stated(
        ptx: dict[str, str]) -> None:
    # a sliced input read in place: its row stride (1064) is 16-byte aligned but not a multiple
    # of 16 elements, so only the kernel's own ALIGN rewrite shows the compiler that each row
    # segment starts on 16 bytes
    # (the rules' tile, 2 rows x 256 columns on 8 warps, gives each thread 2 neighbouring
    # elements: one 4-byte load where the start is known aligned, two 2-byte ones where not)
    assert alignment(1064, 127 * 1064) == 8
    assert "ld.global.b32" in ptx["sum_stated"] and "ld.global.b16" not in ptx["sum_stated"]
    assert "ld.global.b16" in ptx["sum_bare"]


def test_long_softmax_rows_load_and_store_vectors_in_both_passes(ptx: dict[str, str]) -> None:
    # 8192-element tiles on 16 warps: 16 elements a thread, 8 bf16 to a 16-byte access where
    # the row stride is stated aligned; both passes (statistics, then the shared output pass)
    assert alignment(50264) == 8
    stated, bare = ptx["long_stated"], ptx["long_bare"]
    assert stated.count("ld.global.v4.b32") >= 2 and "st.global.v4.b32" in stated
    assert "ld.global.b16" not in stated and "st.global.b16" not in stated
    assert "ld.global.b16" in bare
