"""mm: C = A @ B with fp32 accumulation, one portable tile configuration, grouped tile order."""
# Triton kernels take DSL-typed arguments that Python annotations cannot express.
# mypy: disable-error-code="untyped-decorator,no-untyped-def"

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl

from flagbot.kernels.spec import NO_BF16, Case, Inputs, OpSpec, randn

# One fixed configuration on purpose: the generic library must run on every vendor's Triton,
# and vendors tune their own (backends/_nvidia/tune_configs.yaml). 96 KiB of shared memory
# for 3 stages at 16-bit (32 KiB a stage) fits A100-class and newer GPUs.
BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M = 128, 128, 64, 8
NUM_WARPS, NUM_STAGES = 8, 3


@triton.jit
def _mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
               stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
               BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, DOT_PRECISION: tl.constexpr):
    pid = tl.program_id(0)
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
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None].to(tl.int64) * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :].to(tl.int64) * stride_bn
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < k_left) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=DOT_PRECISION)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + rm[:, None].to(tl.int64) * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


def dot_precision(dtype: torch.dtype) -> str:
    """fp32 inputs: 3xTF32, near-fp32 accuracy on tensor cores. Plain TF32 (Triton's default)
    misses the fp32 tolerance at K=1024 (seen on an H200, 2026-11-26: max error 0.12 > 0.10)."""
    return "tf32x3" if dtype == torch.float32 else "tf32"


def mm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a @ b for 2-D tensors of one dtype (aten::mm)."""
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"mm: shapes {tuple(a.shape)} and {tuple(b.shape)} do not multiply")
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(m, BLOCK_M) * triton.cdiv(n, BLOCK_N),)
    kernel: Any = _mm_kernel
    kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                 c.stride(0), c.stride(1), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
                 GROUP_M=GROUP_M, DOT_PRECISION=dot_precision(a.dtype), num_warps=NUM_WARPS,
                 num_stages=NUM_STAGES)
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
    full_cases=(Case((4096, 4096, 4096)), Case((1024, 1024, 1024)), Case((16, 4096, 4096))),
    bytes_moved=_bytes,
    flops=lambda case: 2 * case.shape[0] * case.shape[1] * case.shape[2],
    reduce_size=lambda case: case.shape[2],
    dtypes=(torch.float16, torch.bfloat16, torch.float32),
    # bf16 tl.dot multiplies raw bit patterns under TRITON_INTERPRET (triton #11584).
    interpreter_dtypes=NO_BF16,
)
