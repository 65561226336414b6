import triton
import triton.language as tl

from flag_gems import runtime


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def add(x, y, alpha=1):
    return runtime.launch(add_kernel, "add", x, y)


def add_(x, y, alpha=1):
    return x.copy_(add(x, y, alpha))
