"""gelu: exact (erf) or tanh-approximated GELU, computed in fp32 whatever the storage dtype."""

from __future__ import annotations

import torch

from flagbot.kernels.ops._pointwise import check_operands, pointwise
from flagbot.kernels.spec import Case, OpSpec, elementwise_bytes, numel, unary_inputs

# 16-bit, large: 16 elements per thread at 4 warps; erf's arithmetic, not memory, is the limit
# there, and independent elements per thread hide it (H200, 2026-11-26, 100,000,007 bf16
# elements: 2048/4 130 us, 1024/4 131, 2048/8 134, 4096/4 155; torch 134).
BLOCK_16 = (2048, 4)
# 16-bit under LARGE elements: 8 a thread, as fp32 gelu and every other elementwise op take;
# short kernels are bound by per-thread latency, not throughput. Three 200-shape random sweeps on
# an H100 (2026-11-26), 16 a thread -> 8: gelu rows under 0.95x torch 189 -> 29 of 588, the
# share at >= 0.95x 68% -> 96% (65552 bf16 0.86x -> 1.03x, 16384x2 fp16 0.86x -> 1.04x).
SMALL_BLOCK_16, LARGE = (2048, 8), 1 << 24


def block_16(numel: int) -> tuple[int, int]:
    """(elements per program, warps) of 16-bit GELU for `numel` elements."""
    return BLOCK_16 if numel >= LARGE else SMALL_BLOCK_16


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
    return pointwise(op, [x], block_16=block_16(x.numel()))


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
