"""softmax and sum_dim (moved to the last dim), one row per program, with the signatures
FlagGems registers them under (aten::_softmax, aten::sum.dim_IntList)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _row_kernel(x_ptr, out_ptr, n, SOFTMAX: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    if SOFTMAX:
        x = tl.load(x_ptr + row * n + cols, mask=mask, other=-float("inf")).to(tl.float32)
        e = tl.where(mask, tl.exp(x - tl.max(x, axis=0)), 0.0)
        tl.store(out_ptr + row * n + cols, (e / tl.sum(e, axis=0)).to(out_ptr.dtype.element_ty),
                 mask=mask)
    else:
        x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_ptr + row, tl.sum(x, axis=0).to(out_ptr.dtype.element_ty))


def softmax(x, dim, half_to_float=False):
    n = x.shape[-1]
    out = torch.empty_like(x)
    _row_kernel[(x.numel() // n,)](x, out, n, SOFTMAX=True, BLOCK=triton.next_power_of_2(n))
    return out


def sum_dim(x, dim, keepdim=False, *, dtype=None):
    d = (dim if isinstance(dim, int) else list(dim)[0]) % x.dim()
    x = x.movedim(d, -1).contiguous()  # reduce along the last dim, rows in memory order
    n = x.shape[-1]
    out = torch.empty(x.shape[:-1], dtype=x.dtype, device=x.device)
    _row_kernel[(x.numel() // n,)](x, out, n, SOFTMAX=False, BLOCK=triton.next_power_of_2(n))
    return out
