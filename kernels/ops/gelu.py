"""gelu: exact (erf) or tanh-approximated GELU, computed in fp32 whatever the storage dtype."""

from __future__ import annotations

import torch

from flagbot.kernels.ops._pointwise import check_operands, pointwise
from flagbot.kernels.spec import Case, OpSpec, elementwise_bytes, numel, unary_inputs

# 16-bit: 16 elements per thread at 4 warps; erf's arithmetic, not memory, is the limit there,
# and independent elements per thread hide it (H200, 2026-11-26, 100,000,007 bf16 elements:
# 2048/4 130 us, 1024/4 131, 2048/8 134, 4096/4 155; torch 134).
BLOCK_16 = (2048, 4)


def gelu(x: torch.Tensor, *, approximate: str = "none") -> torch.Tensor:
    """GELU of `x`; approximate is "none" (erf) or "tanh", as in aten::gelu."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    check_operands("gelu", x)
    if approximate == "tanh":
        op = "gelu_tanh"
    else:
        # 16-bit outputs round far above the fast erf's error (< 1.5e-7 absolute).
        op = "gelu_fast" if x.element_size() == 2 else "gelu"
    return pointwise(op, [x], block_16=BLOCK_16)


SPEC = OpSpec(
    name="gelu",
    aten=("gelu",),
    generic=gelu,
    reference=torch.nn.functional.gelu,
    make_inputs=unary_inputs,
    ci_cases=(Case((1000,)), Case((4, 257), {"approximate": "tanh"})),
    full_cases=(Case((1 << 20,)), Case((1 << 28,)), Case((1 << 28,), {"approximate": "tanh"}),
                Case((100_000_007,))),
    bytes_moved=elementwise_bytes(2),
    flops=lambda case: 8 * numel(case.shape),
)
