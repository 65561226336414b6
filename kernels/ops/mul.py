"""mul.Tensor: out = x * y (same shapes), one pass over memory."""
# Triton kernels take DSL-typed arguments that Python annotations cannot express.
# mypy: disable-error-code="untyped-decorator,no-untyped-def"

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl

from flagbot.kernels.spec import Case, OpSpec, binary_inputs, elementwise_bytes, numel

BLOCK = 2048


@triton.jit
def _mul_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offs, mask=mask).to(tl.float32)
    tl.store(out_ptr + offs, (x * y).to(out_ptr.dtype.element_ty), mask=mask)


def mul(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """x * y for two tensors of one shape and dtype."""
    x, y = x.contiguous(), y.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    kernel: Any = _mul_kernel
    kernel[(triton.cdiv(n, BLOCK),)](x, y, out, n, BLOCK=BLOCK, num_warps=8)
    return out


SPEC = OpSpec(
    name="mul",
    aten=("mul.Tensor",),
    generic=mul,
    reference=torch.mul,
    make_inputs=binary_inputs,
    ci_cases=(Case((1000,)), Case((4, 257))),
    full_cases=(Case((1 << 20,)), Case((1 << 28,))),
    bytes_moved=elementwise_bytes(3),
    flops=lambda case: numel(case.shape),
)
