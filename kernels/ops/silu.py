"""silu: x * sigmoid(x), computed in fp32 whatever the storage dtype."""
# Triton kernels take DSL-typed arguments that Python annotations cannot express.
# mypy: disable-error-code="untyped-decorator,no-untyped-def"

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl

from flagbot.kernels.spec import Case, OpSpec, elementwise_bytes, numel, unary_inputs

BLOCK = 2048


@triton.jit
def _silu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    y = x / (1.0 + tl.exp(-x))
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


def silu(x: torch.Tensor) -> torch.Tensor:
    """SiLU (swish) of `x`."""
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    kernel: Any = _silu_kernel
    kernel[(triton.cdiv(n, BLOCK),)](x, out, n, BLOCK=BLOCK, num_warps=8)
    return out


SPEC = OpSpec(
    name="silu",
    aten=("silu",),
    generic=silu,
    reference=torch.nn.functional.silu,
    make_inputs=unary_inputs,
    ci_cases=(Case((1000,)), Case((4, 257))),
    full_cases=(Case((1 << 20,)), Case((1 << 28,))),
    bytes_moved=elementwise_bytes(2),
    flops=lambda case: 4 * numel(case.shape),
)
