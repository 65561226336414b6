"""gelu: exact (erf) or tanh-approximated GELU, computed in fp32 whatever the storage dtype."""
# Triton kernels take DSL-typed arguments that Python annotations cannot express.
# mypy: disable-error-code="untyped-decorator,no-untyped-def"

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl

from flagbot.kernels.spec import Case, OpSpec, elementwise_bytes, numel, unary_inputs

BLOCK = 2048
# 16-bit: 32 elements per thread at 4 warps; erf's arithmetic, not memory, is the limit there,
# and more independent elements per thread hide it (H200, 2026-11-26: bf16 3755 GB/s vs 3070
# at 2048/8 warps, copy 4126).
BLOCK_16, WARPS_16 = 4096, 4


@triton.jit
def _erf_as(x):
    # Abramowitz & Stegun 7.1.26: |error| < 1.5e-7, about a third of libdevice erf's
    # instructions. Used for 16-bit outputs only, whose rounding (>= 4.9e-4 relative) dwarfs
    # the error; at 2 bytes per element erf's cost, not memory, bounded exact GELU (66% of
    # copy bandwidth in bf16 on an H200, 2026-11-26).
    a = tl.abs(x)
    t = tl.fdiv(1.0, 1.0 + 0.3275911 * a, ieee_rounding=False)  # approximate reciprocal
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027
                                                                         + t * 1.061405429))))
    y = 1.0 - poly * tl.exp(-a * a)
    return tl.where(x < 0, -y, y)


@triton.jit
def _gelu_kernel(x_ptr, out_ptr, n, TANH: tl.constexpr, FAST_ERF: tl.constexpr,
                 BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    if TANH:
        # tanh(z) = 2*sigmoid(2z) - 1: libdevice.tanh is not portable (the CPU interpreter
        # returns None for every libdevice call), tl.exp is.
        z = 0.7978845608028654 * (x + 0.044715 * x * x * x)
        t = 2.0 / (1.0 + tl.exp(-2.0 * z)) - 1.0
        y = 0.5 * x * (1.0 + t)
    elif FAST_ERF:
        y = 0.5 * x * (1.0 + _erf_as(x * 0.7071067811865476))
    else:
        y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


def gelu(x: torch.Tensor, *, approximate: str = "none") -> torch.Tensor:
    """GELU of `x`; approximate is "none" (erf) or "tanh", as in aten::gelu."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    half = x.element_size() == 2
    block, warps = (BLOCK_16, WARPS_16) if half else (BLOCK, 8)
    kernel: Any = _gelu_kernel
    kernel[(triton.cdiv(n, block),)](x, out, n, TANH=approximate == "tanh", FAST_ERF=half,
                                     BLOCK=block, num_warps=warps)
    return out


SPEC = OpSpec(
    name="gelu",
    aten=("gelu",),
    generic=gelu,
    reference=torch.nn.functional.gelu,
    make_inputs=unary_inputs,
    ci_cases=(Case((1000,)), Case((4, 257), {"approximate": "tanh"})),
    full_cases=(Case((1 << 20,)), Case((1 << 28,)), Case((1 << 28,), {"approximate": "tanh"})),
    bytes_moved=elementwise_bytes(2),
    flops=lambda case: 8 * numel(case.shape),
)
