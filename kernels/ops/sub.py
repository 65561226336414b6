"""sub.Tensor: x - alpha * y, broadcast like torch (no generic kernel; checked against aten)."""

from flagbot.kernels.ops._aten import spec
from flagbot.kernels.spec import Case, binary_bytes, binary_inputs, numel

SPEC = spec("sub", "sub.Tensor", binary_inputs,
            ci=(Case((1000,)), Case((4, 257), {"alpha": 0.5})),
            full=(Case((1 << 24,)), Case((4096, 4097)), Case((8192, 12289), {"broadcast": 1})),
            bytes_moved=binary_bytes, flops=lambda case: numel(case.shape))
