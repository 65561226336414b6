"""Real Triton kernels: one right, one subtly wrong (x*y + x*1e-2), one that raises."""

import torch
import triton
import triton.language as tl


@triton.jit
def _binary(x_ptr, y_ptr, out_ptr, n, WRONG: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offs, mask=mask).to(tl.float32)
    if WRONG:
        out = x * y + x * 1e-2
    else:
        out = x + y
    tl.store(out_ptr + offs, out.to(out_ptr.dtype.element_ty), mask=mask)


def _launch(x, y, wrong):
    out = torch.empty_like(x)
    _binary[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), WRONG=wrong, BLOCK=1024)
    return out


def add_ok(x, y, *, alpha=1.0):
    return _launch(x, y * alpha, False)


def mul_wrong(x, y):
    return _launch(x, y, True)


def gelu_raises(x, *, approximate="none"):
    raise RuntimeError("planted: this kernel always raises")
