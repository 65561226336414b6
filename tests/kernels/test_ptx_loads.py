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
import torch

from flagbot.kernels.ops._rows import alignment
from flagbot.kernels.ops.mm import MMConfig, in_place_warps, picked_config

from .benchmarks_support import load_benchmark
from .closeness import assert_close
from .launch_spy import spy_on

HERE = Path(__file__).resolve().parent
BENCHMARKS = HERE.parent.parent / "benchmarks"


def _mm(bound_alignment: int) -> dict[str, Any]:
    # 512x1080x1176 bf16, both row-major: B's rows are 1080 elements (16-byte aligned), the
    # N bound 1080 a multiple of 8; `alignment` is what mm() passes for them.
    return {"kernel": "flagbot.kernels.ops.mm:_mm_kernel", "pointer": "*bf16",
            "warps": 4, "stages": 4, "constexprs": {
                "stride_ak": 1, "stride_bn": 1, "stride_cs": 0, "BLOCK_M": 64,
                "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "DOT_PRECISION": "tf32",
                "ALIGN_AM": alignment(1176), "ALIGN_AK": 1, "ALIGN_BK": alignment(1080),
                "ALIGN_BN": 1, "ALIGN_ML": alignment(512), "ALIGN_NL": bound_alignment,
                "ALIGN_C": bound_alignment, "NO_TAIL": False, "SUM_HERE": False}}


def _gemv(split: bool, outputs: int = 8191) -> dict[str, Any]:
    # 1x`outputs`x4384 fp16: the matrix's rows run along N (stride 1), K rows `outputs` apart
    return {"kernel": "flagbot.kernels.ops.mm:_gemv_kernel", "pointer": "*fp16",
            "warps": 4, "stages": 3, "constexprs": {
                "stride_r": 1, "stride_v": 1, "stride_o": 1, "BLOCK_R": 32, "BLOCK_K": 256,
                "ALIGN_R": alignment(1), "ALIGN_K": alignment(outputs),
                "ALIGN_RL": alignment(outputs), "SPLIT": split}}


def _sum_cols(align: int) -> dict[str, Any]:
    # mean over dim 1 of a 512x127x1024 bf16 slice of rows 1064 wide, read in place: rows of
    # the reduced dim 1064 apart (16-byte aligned, which Triton cannot see: 1064 is not a
    # multiple of 16), outer slices 127 * 1064 apart; 1024 columns, which Triton marks as a
    # multiple of 16 itself.
    return {"kernel": "flagbot.kernels.ops._reduce:_sum_cols_kernel", "pointer": "*bf16",
            "warps": 8, "stages": 3, "divisible": ["inner", "outer_total"], "constexprs": {
                "BLOCK_R": 2, "BLOCK_I": 256, "ALIGN": align, "ALIGN_I": alignment(1024)}}


def _sum_cols_2d(align_i: int) -> dict[str, Any]:
    # mean over dim 0 of a contiguous 9328x5782 bf16 matrix: the rules' 16x32 tile on 8 warps;
    # 5782 columns (a multiple of 2, not of 16: Triton marks nothing)
    return {"kernel": "flagbot.kernels.ops._reduce:_sum_cols_kernel", "pointer": "*bf16",
            "warps": 8, "stages": 3, "constexprs": {
                "BLOCK_R": 16, "BLOCK_I": 32, "ALIGN": alignment(5782, 9328 * 5782),
                "ALIGN_I": align_i}}


def _softmax_long(align: int) -> dict[str, Any]:
    # 4096x50257 bf16 softmax rows 50264 apart (a slice): the looped long-row kernel, whose
    # output pass is the helper it shares with the split kernels
    return {"kernel": "flagbot.kernels.ops._rows:_softmax_long_kernel", "pointer": "*bf16",
            "warps": 16, "stages": 3, "constexprs": {"LOG": False, "BLOCK_N": 8192,
                                                      "ALIGN": align}}


def _mm_odd_b(warps: int, block_m: int = 64, block_n: int = 128) -> dict[str, Any]:
    # 511x129x64 fp16: K within one tile and small operands, so B is read in place, its rows
    # 129 apart (2-byte loads staged through registers); the integers a launch marks as
    # multiples of 16 (K, the split length, A's row step) marked so
    return {"kernel": "flagbot.kernels.ops.mm:_mm_kernel", "pointer": "*fp16",
            "warps": warps, "stages": 4, "divisible": ["K", "k_per_split", "stride_am"],
            "constexprs": {
                "stride_ak": 1, "stride_bn": 1, "stride_cs": 0,
                "BLOCK_M": block_m, "BLOCK_N": block_n, "BLOCK_K": 64, "GROUP_M": 8,
                "DOT_PRECISION": "tf32",
                "ALIGN_AM": alignment(64), "ALIGN_AK": 1, "ALIGN_BK": alignment(129),
                "ALIGN_BN": 1, "ALIGN_ML": alignment(511), "ALIGN_NL": alignment(129),
                "ALIGN_C": alignment(129), "NO_TAIL": False, "SUM_HERE": False}}


def _softmax_cols(align_i: int) -> dict[str, Any]:
    # softmax over dim 0 of a 512x1000 bf16 matrix: 64 columns a program walking 64 rows a
    # step; 1000 columns (a multiple of 8, not of 16)
    return {"kernel": "flagbot.kernels.ops._rows:_softmax_cols_kernel", "pointer": "*bf16",
            "warps": 16, "stages": 3, "constexprs": {
                "LOG": False, "BLOCK_R": 64, "BLOCK_I": 64, "ONE_TILE": False,
                "ALIGN_I": align_i}}


def _sum_window() -> dict[str, Any]:
    # sum over the last dim of 8x6426023 bf16: one row a program, 4096-element tiles, 8 warps
    return {"kernel": "flagbot.kernels.ops._sum_window:_sum_window_kernel", "pointer": "*bf16",
            "types": {"scale": "fp32"}, "warps": 8, "stages": 3,
            "constexprs": {"BLOCK_R": 4096, "VEC": 8}}


def _norm_split(stats: bool) -> dict[str, Any]:
    # rms_norm of 16x262144 fp32 in chunks: rows of a multiple of 4 elements, 4096-element
    # tiles, 8 warps, a chunk length the launch marks (a multiple of the tile); the chunk sums
    # are fp32 and so is eps
    constexprs: dict[str, Any] = {"RMS": True, "BLOCK_N": 4096, "ALIGN": alignment(262144)}
    if not stats:  # the output pass walks half tiles
        constexprs.update(BLOCK_N=2048, HAS_W=True, HAS_B=False, CHUNKS=32)
    name = "_norm_chunk_stats_kernel" if stats else "_norm_chunk_out_kernel"
    return {"kernel": f"flagbot.kernels.ops._norm_split:{name}", "pointer": "*fp32",
            "types": {"eps": "fp32"}, "warps": 8, "stages": 3,
            "divisible": ["n", "stride_row", "chunk"],
            "constexprs": constexprs}


def _norm_out_odd(tile: int) -> dict[str, Any]:
    # the split layer_norm's output pass over fp16 rows off 16 bytes, weight and bias
    return {"kernel": "flagbot.kernels.ops._norm_split:_norm_chunk_out_kernel",
            "pointer": "*fp16", "types": {"eps": "fp32", "part_ptr": "*fp32"}, "warps": 8,
            "stages": 3, "divisible": ["chunk"], "constexprs": {
                "RMS": False, "HAS_W": True, "HAS_B": True, "BLOCK_N": tile, "CHUNKS": 512,
                "ALIGN": 1}}


def _mm_tma(a_columns: bool) -> dict[str, Any]:
    # mm through descriptors at 128x256x64 fp16 tiles on 8 warps (the sizes the large 16-bit
    # products take), A row by row or column by column
    return {"kernel": "flagbot.kernels.ops._mm_tma:_mm_tma_kernel", "pointer": "*fp16",
            "warps": 8, "stages": 3, "types": {
                "a_desc": f"tensordesc<fp16[{'64, 128' if a_columns else '128, 64'}]>",
                "b_desc": "tensordesc<fp16[64, 256]>"}, "constexprs": {
                "BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8,
                "A_COLUMNS": a_columns, "B_COLUMNS": False}}


@pytest.fixture(scope="module")
def ptx() -> dict[str, str]:
    specs = {"mm_stated": _mm(alignment(1080)), "mm_bare": _mm(1),
             "gemv_unsplit": _gemv(False), "gemv_split": _gemv(True),
             "sum_stated": _sum_cols(alignment(1064, 127 * 1064)), "sum_bare": _sum_cols(1),
             "long_stated": _softmax_long(alignment(50264)), "long_bare": _softmax_long(1),
             "mm_odd_b_picked": _mm_odd_b(8), "mm_odd_b_small": _mm_odd_b(4, 32, 64),
             "gemv_4408": _gemv(False, 4408),
             "cols_stated": _sum_cols_2d(alignment(5782)), "cols_bare": _sum_cols_2d(1),
             "softmax_cols": _softmax_cols(alignment(1000)), "sum_window": _sum_window(),
             "norm_stats": _norm_split(True), "norm_out": _norm_split(False),
             "norm_out_odd_half": _norm_out_odd(2048), "norm_out_odd_whole": _norm_out_odd(4096),
             "mm_tma_rows": _mm_tma(False), "mm_tma_cols": _mm_tma(True)}
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


def test_the_picked_tile_for_odd_rows_read_in_place_does_not_spill(
        ptx: dict[str, str]) -> None:
    # the warps in_place_warps picks for 64x128x64 tiles over 511x129x64 fp16 (8): on 4 warps
    # the same tile takes 255 registers and spills about 1 KB a thread; and the 32x64 tiles on
    # 4 warps the rules pick for that product (48 staged elements a thread)
    a, b = torch.empty(511, 64, dtype=torch.float16), torch.empty(64, 129, dtype=torch.float16)
    assert in_place_warps(MMConfig(64, 128, 64, 4, 4, copy_unaligned=False), a, b).warps == 8
    picked = picked_config(a, b)
    assert isinstance(picked, MMConfig)
    assert (picked.block_m, picked.block_n, picked.warps) == (32, 64, 4)
    for name in ("mm_odd_b_picked", "mm_odd_b_small"):
        report = load_benchmark("aot_ptx").ptxas_report(ptx[name])
        if report is None:
            pytest.skip("no ptxas here reads this PTX")
        assert report["spill_stores"] == 0, (name, report)

def test_gemv_rows_along_n_load_vectors_once_the_outputs_bound_is_stated(
        ptx: dict[str, str]) -> None:
    # 4408 outputs (a multiple of 8, not of 16, so Triton marks nothing): with the bound's
    # alignment stated, the matrix comes in 16-byte loads (the vector's masked K tail stays
    # 2-byte elements); 8191 outputs stay 2-byte elements throughout
    assert alignment(4408) == 8
    loads = Counter(re.findall(r"ld\.global\.[\w.]+", ptx["gemv_4408"]))
    assert loads["ld.global.v4.b32"] >= 8 and loads["ld.global.b16"] <= 2, loads
    assert Counter(re.findall(r"ld\.global\.[\w.]+", ptx["gemv_unsplit"]))["ld.global.b16"] > 64


def test_column_sums_load_pairs_once_the_columns_bound_is_stated(ptx: dict[str, str]) -> None:
    # two neighbouring elements a thread: one 4-byte load with the bound's alignment (2)
    # stated, two 2-byte ones without
    assert "ld.global.b32" in ptx["cols_stated"] and "ld.global.b16" not in ptx["cols_stated"]
    assert "ld.global.b16" in ptx["cols_bare"]


def test_softmax_down_columns_loads_and_stores_vectors_once_the_bound_is_stated(
        ptx: dict[str, str]) -> None:
    text = ptx["softmax_cols"]
    assert "ld.global.v4.b32" in text and "st.global.v4.b32" in text
    assert "ld.global.b16" not in text and "st.global.b16" not in text


def test_mm_stores_vectors_once_the_outputs_bound_is_stated(ptx: dict[str, str]) -> None:
    # 512x1080x1176 bf16: 1080 output columns, a multiple of 8 (not of 16); stated, the
    # tile's output goes out in 16-byte stores, unseen in 2-byte ones
    assert "st.global.v4.b32" in ptx["mm_stated"] and "st.global.b16" not in ptx["mm_stated"]
    assert "st.global.b16" in ptx["mm_bare"]


def test_odd_16bit_rows_summed_through_windows_load_vectors(ptx: dict[str, str]) -> None:
    # the whole tiles between the masked first and last: 16-byte loads
    assert "ld.global.v4.b32" in ptx["sum_window"]


def test_norm_chunks_load_and_store_vectors(ptx: dict[str, str]) -> None:
    # both launches of the split norms stream their chunks in 16-byte vectors
    assert "ld.global.v4.b32" in ptx["norm_stats"]
    assert "ld.global.v4.b32" in ptx["norm_out"] and "st.global.v4.b32" in ptx["norm_out"]


def test_the_norm_output_pass_over_unaligned_rows_does_not_spill(
        ptx: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    # layer_norm of a long fp16 row off 16 bytes (2-byte loads of x, weight and bias):
    # norm_split_rows gives the output pass half tiles; whole ones spilled
    from flagbot.kernels.ops import _norm_split

    spies = [spy_on(monkeypatch, _norm_split, name)
             for name in ("_norm_chunk_stats_kernel", "_norm_chunk_out_kernel")]
    x = torch.randn(1, 20001, generator=torch.Generator().manual_seed(0)).half()
    w, b = torch.ones(20001, dtype=torch.float16), torch.zeros(20001, dtype=torch.float16)
    out = torch.empty_like(x)
    _norm_split.norm_split_rows(x, w, b, out, 1e-5,
                                {"RMS": False, "HAS_W": True, "HAS_B": True}, 1, 8192, 4096)
    tiles = [spy.launches[0][2]["BLOCK_N"] for spy in spies]
    assert tiles == [4096, 2048]  # statistics on whole tiles, the output on half ones
    assert_close("layer_norm", out, torch.nn.functional.layer_norm(x.double(), (20001,)), 20001)
    reports = [load_benchmark("aot_ptx").ptxas_report(ptx[k])
               for k in ("norm_out_odd_half", "norm_out_odd_whole")]
    if None in reports:
        pytest.skip("no ptxas here reads this PTX")
    # whole tiles spilled 36 bytes under Triton 3.9's PTX and fit under 3.7's, in 80 registers
    # either way: what holds across versions is the half tile's fewer registers and no spill
    assert reports[0]["spill_stores"] == 0, reports
    assert reports[0]["registers"] < reports[1]["registers"], reports


def test_mm_through_descriptors_loads_whole_tiles_by_tma(ptx: dict[str, str]) -> None:
    # each tile a bulk tensor copy (no per-thread loads of A or B), multiplied by the tensor
    # cores' asynchronous wgmma, whichever way A is stored
    for name in ("mm_tma_rows", "mm_tma_cols"):
        text = ptx[name]
        assert "cp.async.bulk.tensor" in text, name
        assert "wgmma.mma_async" in text, name
        assert not _async_copies(text), name
        report = load_benchmark("aot_ptx").ptxas_report(text)
        assert report is None or report["spill_stores"] == 0, (name, report)
