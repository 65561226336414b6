"""mm: C = A @ B with fp32 accumulation; tiles picked by shape, K split for skinny products."""
# Triton kernels take DSL-typed arguments that Python annotations cannot express.
# mypy: disable-error-code="untyped-decorator,no-untyped-def"

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import triton
import triton.language as tl

from flagbot.kernels.ops._reduce import sum_partials
from flagbot.kernels.spec import NO_BF16, Case, Inputs, OpSpec, randn

# Tile configurations are picked by shape, not autotuned: the generic library must run the same
# way on every vendor's Triton and on the CPU interpreter, and vendors tune their own
# (backends/_nvidia/tune_configs.yaml). Shared memory stays under 150 KiB (128x256x64 tiles, three
# stages, 16-bit), which fits A100-class and newer GPUs. Few output tiles (skinny or GEMV-like products) split K across programs that
# write fp32 partial products, summed by a second launch.
TARGET_PROGRAMS = 264  # two per multiprocessor on a 132-SM part


@dataclass(frozen=True)
class MMConfig:
    """One tile configuration; split_k > 1 sums fp32 partial products in a second launch."""

    block_m: int
    block_n: int
    block_k: int
    warps: int
    stages: int
    group_m: int = 8
    split_k: int = 1


def mm_config(m: int, n: int, k: int, dtype: torch.dtype) -> MMConfig:
    """The tile configuration for an (m, k) @ (k, n) product in `dtype`.

    Picked from one sweep of tile shapes (H200, 2026-11-26): 16-bit 4096^3 128x256x64 203 us,
    128x128x64 233 (torch 180); 1024^3 64x128x64 10.6 us, 128x128x64 14.4 (torch 9.4);
    fp32 (3xTF32) 4096^3 128x64x32 2491 us, 128x128x32 3919 (torch 2688); 64x8192x8192 fp16
    split 2 49.5 us, split 5 64.0 (torch 43.6).
    """
    wide = dtype.itemsize == 2
    bk = 64 if wide else 32
    if m <= 16:
        cfg, max_split = MMConfig(16, 128, bk, 4, 4), 8
    elif m <= 64:
        cfg, max_split = MMConfig(64, 128, bk, 4, 4), 2
    elif not wide:
        cfg, max_split = MMConfig(128, 64, 32, 4, 4), 1
    elif triton.cdiv(m, 128) * triton.cdiv(n, 128) < TARGET_PROGRAMS:
        cfg, max_split = MMConfig(64, 128, 64, 4, 4), 1
    elif m >= 2048 and n >= 2048:
        cfg, max_split = MMConfig(128, 256, 64, 8, 3), 1
    else:
        cfg, max_split = MMConfig(128, 128, 64, 8, 3), 1
    tiles = triton.cdiv(m, cfg.block_m) * triton.cdiv(n, cfg.block_n)
    # Only skinny products split K: for squares the partial sums cost more than idle SMs.
    if max_split > 1 and tiles < TARGET_PROGRAMS:
        split = min(triton.cdiv(TARGET_PROGRAMS, tiles), k // (4 * cfg.block_k), max_split)
        if split > 1:
            cfg = MMConfig(cfg.block_m, cfg.block_n, cfg.block_k, cfg.warps, cfg.stages,
                           cfg.group_m, split)
    return cfg


@triton.jit
def _mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, k_per_split, stride_am, stride_ak, stride_bk,
               stride_bn, stride_cs, stride_cm, stride_cn, BLOCK_M: tl.constexpr,
               BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
               DOT_PRECISION: tl.constexpr):
    pid = tl.program_id(0)
    split = tl.program_id(1)
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    # Grouped order: GROUP_M row-tiles share B's column tiles while they are still in L2.
    group = pid // (GROUP_M * grid_n)
    first_m = group * GROUP_M
    group_size = min(grid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % (GROUP_M * grid_n)) % group_size
    pid_n = (pid % (GROUP_M * grid_n)) // group_size
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    k_lo = split * k_per_split
    k_hi = tl.minimum(k_lo + k_per_split, K)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = (a_ptr + rm[:, None].to(tl.int64) * stride_am
              + (k_lo + rk[None, :]).to(tl.int64) * stride_ak)
    b_ptrs = (b_ptr + (k_lo + rk[:, None]).to(tl.int64) * stride_bk
              + rn[None, :].to(tl.int64) * stride_bn)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k in range(0, tl.cdiv(k_hi - k_lo, BLOCK_K)):
        k_left = k_hi - k_lo - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < k_left) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=DOT_PRECISION)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = (c_ptr + split.to(tl.int64) * stride_cs + rm[:, None].to(tl.int64) * stride_cm
              + rn[None, :] * stride_cn)
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


def dot_precision(dtype: torch.dtype) -> str:
    """fp32 inputs: 3xTF32, near-fp32 accuracy on tensor cores. Plain TF32 (Triton's default)
    misses the fp32 tolerance at K=1024 (seen on an H200, 2026-11-26: max error 0.12 > 0.10)."""
    return "tf32x3" if dtype == torch.float32 else "tf32"


def _aligned(t: torch.Tensor) -> torch.Tensor:
    """`t` itself when its rows start on 16 bytes, else a copy whose row stride is padded so
    they do: unaligned rows (a 1999-element bf16 stride) keep the tile loads from using
    16-byte vectors and asynchronous copies (H200, 2026-11-26: 4097x3001x1999 bf16 1682 us,
    torch 396). The copy moves each element twice, small beside the product for m > 64."""
    per16 = 16 // t.element_size()
    if t.stride(1) == 1 and t.stride(0) % per16 == 0:
        return t
    if t.stride(0) == 1 and t.stride(1) % per16 == 0:
        return t
    rows, cols = t.shape
    padded = torch.empty((rows, triton.cdiv(cols, per16) * per16), dtype=t.dtype,
                         device=t.device)[:, :cols]
    padded.copy_(t)
    return padded


def mm(a: torch.Tensor, b: torch.Tensor, *, config: MMConfig | None = None) -> torch.Tensor:
    """a @ b for 2-D float tensors of one dtype (aten::mm); any strides (a transposed operand is
    read in place). `config` overrides the shape-picked tiles (tests, benchmarks)."""
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"mm: shapes {tuple(a.shape)} and {tuple(b.shape)} do not multiply")
    if a.dtype != b.dtype or a.dtype not in (torch.float32, torch.float16, torch.bfloat16):
        raise NotImplementedError(f"mm: two float32/float16/bfloat16 operands of one dtype, got "
                                  f"{a.dtype} and {b.dtype}")
    if a.device != b.device:
        raise NotImplementedError("mm: operands on one device only")
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    if c.numel() == 0:
        return c
    if k == 0:
        return c.zero_()
    cfg = config or mm_config(m, n, k, a.dtype)
    if m > 64:
        a, b = _aligned(a), _aligned(b)
    k_per_split = triton.cdiv(triton.cdiv(k, cfg.split_k), cfg.block_k) * cfg.block_k
    splits = triton.cdiv(k, k_per_split)
    dst = c if splits == 1 else torch.empty((splits, m, n), dtype=torch.float32, device=a.device)
    stride_s = 0 if splits == 1 else dst.stride(0)
    grid = (triton.cdiv(m, cfg.block_m) * triton.cdiv(n, cfg.block_n), splits)
    kernel: Any = _mm_kernel
    kernel[grid](a, b, dst, m, n, k, k_per_split, a.stride(0), a.stride(1), b.stride(0),
                 b.stride(1), stride_s, dst.stride(-2), dst.stride(-1), BLOCK_M=cfg.block_m,
                 BLOCK_N=cfg.block_n, BLOCK_K=cfg.block_k, GROUP_M=cfg.group_m,
                 DOT_PRECISION=dot_precision(a.dtype), num_warps=cfg.warps,
                 num_stages=cfg.stages)
    if splits > 1:
        sum_partials(dst, splits, m * n, c)
    return c


def make_inputs(case: Case, dtype: torch.dtype, device: torch.device,
                gen: torch.Generator) -> Inputs:
    """A (M, K) and B (K, N) for a case shaped (M, N, K)."""
    m, n, k = case.shape
    return (randn((m, k), dtype, device, gen), randn((k, n), dtype, device, gen)), {}


def _bytes(case: Case, dtype: torch.dtype) -> int:
    m, n, k = case.shape
    return (m * k + k * n + m * n) * dtype.itemsize


SPEC = OpSpec(
    name="mm",
    aten=("mm",),
    generic=mm,
    reference=torch.mm,
    make_inputs=make_inputs,
    ci_cases=(Case((33, 40, 24)), Case((16, 130, 70))),
    full_cases=(Case((4096, 4096, 4096)), Case((1024, 1024, 1024)), Case((16, 4096, 4096)),
                Case((1, 8192, 8192)), Case((8192, 8192, 8192)), Case((4097, 3001, 1999))),
    bytes_moved=_bytes,
    flops=lambda case: 2 * case.shape[0] * case.shape[1] * case.shape[2],
    reduce_size=lambda case: case.shape[2],
    dtypes=(torch.float16, torch.bfloat16, torch.float32),
    # Triton's CPU interpreter multiplies bf16 tl.dot operands as raw bit patterns (garbage).
    interpreter_dtypes=NO_BF16,
)
