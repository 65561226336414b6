"""rsqrt: 1 / sqrt(x) of positive inputs (no generic kernel; checked against aten)."""

from flagbot.kernels.ops._aten import spec, unary_positive
from flagbot.kernels.spec import Case, elementwise_bytes, numel

SPEC = spec("rsqrt", "rsqrt", unary_positive, ci=(Case((1000,)), Case((4, 257))),
            full=(Case((1 << 24,)), Case((4096, 4097)), Case((100_000_007,))),
            bytes_moved=elementwise_bytes(2), flops=lambda case: numel(case.shape))
