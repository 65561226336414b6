"""mm's tiles loaded through tensor descriptors (NVIDIA's TMA on sm_90 and newer), for 16-bit
operands whose rows start on 16 bytes: the copy engine fetches each tile whole, zero-filling
what lies past M, N or K, so the tile loop carries no masks and no address arithmetic.

Fenced: used only where `MMConfig.tma` asks for it, the operands can be described (`ready`)
and Triton's active target has the hardware (`target_has_tma`; the CPU interpreter emulates
descriptors, so the tests run it there). Everywhere else mm() takes its pointer kernel.
Measured (H200, Triton 3.6, 2026-11-27, head vs base on the same machine): picked_config asks
for it at every 16-bit tile, 1.03-1.11x the pointer kernel's device time by tile class (median
over the record's 237 such rows); `benchmarks/bench_mm_tiles.py` times both (its `/tma`
configurations). Host time per call on that machine (`benchmarks/bench_mm_host_tma.py`, one
run): 50-84 us for the whole call against the pointer kernel's 62-104 us; the two descriptors
cost 4-6 us of it and Triton's launch of the kernel 27 us.

Two kernels: one program a tile (K split or not), and, where `MMConfig.persistent` asks for it
(mm.persistent_pays), resident programs that loop over the tiles (`mm_tma_persistent`; the
grid from `_resident`): over the 49 record rows it takes, 0.97-1.46x the first's device time
but for one row at 0.90, 20 rows faster by more than 3% (H200 A/B, 2026-11-28), the most where
K is short.
"""
# Triton kernels take DSL-typed arguments that Python annotations cannot express.
# mypy: disable-error-code="untyped-decorator,no-untyped-def"

from __future__ import annotations

import functools
import importlib
from typing import Any

import torch
import triton
import triton.language as tl

from flagbot.kernels.backend_utils import interpreted
from flagbot.kernels.ops import _resident
from flagbot.kernels.ops._mm_common import grouped_tile, on_16_bytes
from flagbot.kernels.ops._rows import alignment

# Host-side descriptors came with Triton 3.4; an older Triton (a vendor's fork among them)
# has none, and mm takes its pointer kernel there.
TensorDescriptor: Any
try:
    TensorDescriptor = importlib.import_module("triton.tools.tensor_descriptor").TensorDescriptor
except ImportError:
    TensorDescriptor = None


@triton.jit
def _tile_product(a_desc, b_desc, off_m, off_n, k_lo, k_hi, BLOCK_M: tl.constexpr,
                  BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, A_COLUMNS: tl.constexpr,
                  B_COLUMNS: tl.constexpr):
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    # k_lo and k_hi - k_lo are whole K tiles (or k_hi is K): a split's tiles never reach into
    # the next one's, and the last tile of K reads zeros past its end
    for k in tl.range(k_lo, k_hi, BLOCK_K):
        if A_COLUMNS:
            a = a_desc.load([k, off_m]).T
        else:
            a = a_desc.load([off_m, k])
        if B_COLUMNS:
            b = b_desc.load([off_n, k]).T
        else:
            b = b_desc.load([k, off_n])
        acc = tl.dot(a, b, acc)
    return acc


@triton.jit
def _store_tile(acc, c_ptr, off_m, off_n, M, N, stride_cm, BLOCK_M: tl.constexpr,
                BLOCK_N: tl.constexpr):
    rm = off_m + tl.arange(0, BLOCK_M)
    rn = off_n + tl.arange(0, BLOCK_N)
    c = c_ptr + rm[:, None].to(tl.int64) * stride_cm + rn[None, :]
    tl.store(c, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def _mm_tma_kernel(a_desc, b_desc, c_ptr, M, N, K, k_per_split, stride_cs, stride_cm,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                   GROUP_M: tl.constexpr, A_COLUMNS: tl.constexpr, B_COLUMNS: tl.constexpr,
                   ALIGN_C: tl.constexpr):
    # What divides the output's width and row steps, rewritten so the compiler sees it (as the
    # pointer kernel does): untold, a 128x256 fp16 tile over 7794 or 6264 columns stored 2-byte
    # elements, 128 stores a thread (sm_90 compile), and ran 0.54x and 0.79x the pointer kernel
    # (H200, 2026-11-27)
    N = (N // ALIGN_C) * ALIGN_C
    stride_cm = (stride_cm // ALIGN_C) * ALIGN_C
    stride_cs = (stride_cs // ALIGN_C) * ALIGN_C
    pid_m, pid_n = grouped_tile(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    k_lo = tl.program_id(1) * k_per_split
    acc = _tile_product(a_desc, b_desc, pid_m * BLOCK_M, pid_n * BLOCK_N, k_lo,
                        tl.minimum(k_lo + k_per_split, K), BLOCK_M, BLOCK_N, BLOCK_K, A_COLUMNS,
                        B_COLUMNS)
    _store_tile(acc, c_ptr + tl.program_id(1).to(tl.int64) * stride_cs, pid_m * BLOCK_M,
                pid_n * BLOCK_N, M, N, stride_cm, BLOCK_M, BLOCK_N)


@triton.jit
def _mm_tma_persistent_kernel(a_desc, b_desc, c_ptr, M, N, K, stride_cm, BLOCK_M: tl.constexpr,
                              BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                              GROUP_M: tl.constexpr, A_COLUMNS: tl.constexpr,
                              B_COLUMNS: tl.constexpr, ALIGN_C: tl.constexpr):
    # Each program takes output tiles num_programs apart. The tile loop and the K loop inside
    # it are flattened into one loop that the compiler pipelines whole, so the next tile's first
    # loads are in flight while this tile is stored.
    N = (N // ALIGN_C) * ALIGN_C
    stride_cm = (stride_cm // ALIGN_C) * ALIGN_C
    tiles = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N)
    for tile in tl.range(tl.program_id(0), tiles, tl.num_programs(0), flatten=True):
        pid_m, pid_n = grouped_tile(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
        acc = _tile_product(a_desc, b_desc, pid_m * BLOCK_M, pid_n * BLOCK_N, 0, K, BLOCK_M,
                            BLOCK_N, BLOCK_K, A_COLUMNS, B_COLUMNS)
        _store_tile(acc, c_ptr, pid_m * BLOCK_M, pid_n * BLOCK_N, M, N, stride_cm, BLOCK_M,
                    BLOCK_N)


@functools.cache
def target_has_tma() -> bool:
    """Triton's active target loads through tensor descriptors: NVIDIA sm_90 or newer, or the
    CPU interpreter."""
    if interpreted():
        return True
    try:
        target = triton.runtime.driver.active.get_current_target()
    except Exception:  # no driver, or a vendor's Triton without this query: the pointer kernel
        return False
    return target.backend == "cuda" and isinstance(target.arch, int) and target.arch >= 90


def _describable(t: torch.Tensor) -> bool:
    """A 16-bit operand stored row by row or column by column, its start and its rows (or
    columns) on 16 bytes: what a descriptor can address."""
    return t.element_size() == 2 and t.data_ptr() % 16 == 0 and on_16_bytes(t)


def ready(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether mm_tma can compute a @ b with this Triton on this target."""
    return (TensorDescriptor is not None and _describable(a) and _describable(b)
            and target_has_tma())


def _descriptors(a: torch.Tensor, b: torch.Tensor, block_m: int, block_n: int,
                 block_k: int) -> tuple[Any, Any, bool, bool]:
    """(A's descriptor, B's, A stored by columns, B stored by columns): an operand stored by
    columns is described as its transpose, which is stored row by row."""
    a_columns, b_columns = a.stride(1) != 1, b.stride(1) != 1
    a_desc = (TensorDescriptor.from_tensor(a.t(), [block_k, block_m]) if a_columns
              else TensorDescriptor.from_tensor(a, [block_m, block_k]))
    b_desc = (TensorDescriptor.from_tensor(b.t(), [block_n, block_k]) if b_columns
              else TensorDescriptor.from_tensor(b, [block_k, block_n]))
    return a_desc, b_desc, a_columns, b_columns


def mm_tma(a: torch.Tensor, b: torch.Tensor, dst: torch.Tensor, k_per_split: int, splits: int,
           block_m: int, block_n: int, block_k: int, group_m: int, warps: int,
           stages: int) -> None:
    """a @ b into dst ((m, n), or (splits, m, n) fp32 partial products) for operands `ready`
    says it can take; dst is contiguous."""
    m, k = a.shape
    n = b.shape[1]
    a_desc, b_desc, a_columns, b_columns = _descriptors(a, b, block_m, block_n, block_k)
    stride_s = dst.stride(0) if dst.dim() == 3 else 0
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n), splits)
    _mm_tma_kernel[grid](a_desc, b_desc, dst, m, n, k, k_per_split, stride_s, dst.stride(-2),
                         BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=group_m,
                         A_COLUMNS=a_columns, B_COLUMNS=b_columns,
                         ALIGN_C=alignment(n, dst.stride(-2), stride_s), num_warps=warps,
                         num_stages=stages)


def mm_tma_persistent(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, block_m: int,
                      block_n: int, block_k: int, group_m: int, warps: int,
                      stages: int) -> None:
    """a @ b into the contiguous (m, n) `c` by programs that stay resident and take one output
    tile after another (unsplit K), for operands `ready` says it can take."""
    m, k = a.shape
    n = b.shape[1]
    a_desc, b_desc, a_columns, b_columns = _descriptors(a, b, block_m, block_n, block_k)
    tiles = triton.cdiv(m, block_m) * triton.cdiv(n, block_n)
    align_c = alignment(n, c.stride(0))
    # what the compiled kernel's registers and shared memory depend on
    kernel = (a.dtype, block_m, block_n, block_k, warps, stages, a_columns, b_columns, align_c)
    programs = _resident.programs(a.device, kernel)
    compiled = _mm_tma_persistent_kernel[(min(tiles, programs),)](
        a_desc, b_desc, c, m, n, k, c.stride(0), BLOCK_M=block_m, BLOCK_N=block_n,
        BLOCK_K=block_k, GROUP_M=group_m, A_COLUMNS=a_columns, B_COLUMNS=b_columns,
        ALIGN_C=align_c, num_warps=warps, num_stages=stages)
    _resident.learn(a.device, kernel, compiled)
