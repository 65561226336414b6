"""log_softmax.int along the last dim: a spec only. The generic library has no kernel for it,
so a backend's log_softmax is a new op, gated against torch native (issue 3)."""

from __future__ import annotations

import torch

from flagbot.kernels.spec import Case, OpSpec, elementwise_bytes, last_dim, numel, unary_inputs

SPEC = OpSpec(
    name="log_softmax",
    aten=("log_softmax.int",),
    generic=None,
    reference=torch.log_softmax,
    make_inputs=lambda case, dtype, dev, gen: (unary_inputs(case, dtype, dev, gen)[0], {"dim": -1}),
    ci_cases=(Case((4, 33)), Case((3, 200))),
    full_cases=(Case((4096, 4096)), Case((65536, 128)), Case((8192, 1024))),
    bytes_moved=elementwise_bytes(2),
    flops=lambda case: 5 * numel(case.shape),
    reduce_size=last_dim,
)
