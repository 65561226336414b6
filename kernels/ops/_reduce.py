"""One-dim sum reduction shared by `sum` and `mean`: the input seen as (outer, R, inner)."""
# Triton kernels take DSL-typed arguments that Python annotations cannot express.
# mypy: disable-error-code="untyped-decorator,no-untyped-def"

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import triton
import triton.language as tl

from flagbot.kernels.spec import Case, Inputs, OpSpec, numel, randn


@triton.jit
def _sum_last_kernel(x_ptr, out_ptr, r, scale, BLOCK_R: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros([BLOCK_R], tl.float32)
    for start in range(0, r, BLOCK_R):
        cols = start + tl.arange(0, BLOCK_R)
        acc += tl.load(x_ptr + row * r + cols, mask=cols < r, other=0.0).to(tl.float32)
    tl.store(out_ptr + row, (tl.sum(acc, axis=0) * scale).to(out_ptr.dtype.element_ty))


@triton.jit
def _sum_mid_kernel(x_ptr, out_ptr, r, inner, scale, BLOCK_R: tl.constexpr,
                    BLOCK_I: tl.constexpr):
    # Columns of `inner` contiguous elements: each program owns BLOCK_I columns of one outer
    # slice and walks down R, so every load is a coalesced row segment.
    outer = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    col_mask = cols < inner
    base = outer * r * inner
    acc = tl.zeros([BLOCK_R, BLOCK_I], tl.float32)
    for start in range(0, r, BLOCK_R):
        rr = start + tl.arange(0, BLOCK_R)
        mask = (rr[:, None] < r) & col_mask[None, :]
        acc += tl.load(x_ptr + base + rr[:, None] * inner + cols[None, :], mask=mask,
                       other=0.0).to(tl.float32)
    out = tl.sum(acc, axis=0) * scale
    tl.store(out_ptr + outer * inner + cols, out.to(out_ptr.dtype.element_ty), mask=col_mask)


def normalize_dim(x: torch.Tensor, dim: int | Sequence[int]) -> int:
    """The one non-negative dim of an aten `dim` argument (int or one-element list)."""
    dims = [dim] if isinstance(dim, int) else list(dim)
    if len(dims) != 1:
        raise NotImplementedError(f"reduction over exactly one dim is supported, got {dim}")
    return dims[0] % x.dim()


def reduce_dim(x: torch.Tensor, dim: int | Sequence[int], keepdim: bool, mean: bool,
               dtype: torch.dtype | None) -> torch.Tensor:
    """Sum (or mean) of `x` over one dim, accumulated in fp32."""
    d = normalize_dim(x, dim)
    x = x.contiguous() if dtype is None else x.contiguous().to(dtype)
    shape = list(x.shape)
    r = shape[d]
    outer, inner = numel(tuple(shape[:d])), numel(tuple(shape[d + 1:]))
    out_shape = shape[:d] + ([1] if keepdim else []) + shape[d + 1:]
    out = torch.empty(out_shape, dtype=x.dtype, device=x.device)
    scale = 1.0 / r if mean else 1.0
    kernel: Any
    if inner == 1:
        block = min(int(triton.next_power_of_2(r)), 4096)
        kernel = _sum_last_kernel
        kernel[(outer,)](x, out, r, scale, BLOCK_R=block, num_warps=4 if block <= 1024 else 8)
    else:
        block_i = min(int(triton.next_power_of_2(inner)), 64)
        block_r = min(int(triton.next_power_of_2(r)), 32)
        kernel = _sum_mid_kernel
        kernel[(outer, triton.cdiv(inner, block_i))](x, out, r, inner, scale, BLOCK_R=block_r,
                                                      BLOCK_I=block_i, num_warps=4)
    return out


def make_inputs(case: Case, dtype: torch.dtype, device: torch.device,
                gen: torch.Generator) -> Inputs:
    """x of the case's shape; the case's `dim` as the second positional argument."""
    return (randn(case.shape, dtype, device, gen), [case.params["dim"]]), {}


def reduced_size(case: Case) -> int:
    """Length of the reduced dim (FlagGems scales atol by it)."""
    return case.shape[int(case.params["dim"])]


def bytes_moved(case: Case, dtype: torch.dtype) -> int:
    """Input read once plus the output written once."""
    n = numel(case.shape)
    return (n + n // reduced_size(case)) * dtype.itemsize


CI_CASES = (Case((4, 33), {"dim": -1}), Case((5, 6, 7), {"dim": 1}), Case((17, 8), {"dim": 0}))
FULL_CASES = (Case((4096, 4096), {"dim": -1}), Case((4096, 4096), {"dim": 0}),
              Case((64, 4096, 64), {"dim": 1}))


def reduction_spec(name: str, aten: tuple[str, ...], generic: Any, reference: Any) -> OpSpec:
    """The spec shared by the one-dim reductions (sum, mean): same cases, bytes and FLOPs."""
    return OpSpec(
        name=name,
        aten=aten,
        generic=generic,
        reference=reference,
        make_inputs=make_inputs,
        ci_cases=CI_CASES,
        full_cases=FULL_CASES,
        bytes_moved=bytes_moved,
        flops=lambda case: numel(case.shape),
        reduce_size=reduced_size,
    )
