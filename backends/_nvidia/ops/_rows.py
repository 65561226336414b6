"""Multi-row kernels shared by softmax, log_softmax and rms_norm (ROWS rows per program)."""

import torch
import triton
import triton.language as tl

from ..heuristics_config_utils import HEURISTICS_CONFIGS


@triton.heuristics(HEURISTICS_CONFIGS["softmax"])
@triton.jit
def softmax_rows_kernel(x_ptr, out_ptr, M, N, LOG: tl.constexpr, BLOCK_N: tl.constexpr,
                        ROWS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None].to(tl.int64) * N + cols[None, :]
    # Rows past M re-read row M-1 (never stored) so that no row is all -inf (NaN otherwise).
    load_offs = (rows[:, None] % M).to(tl.int64) * N + cols[None, :]
    x = tl.load(x_ptr + load_offs, mask=cols[None, :] < N, other=-float("inf")).to(tl.float32)
    shifted = x - tl.max(x, axis=1)[:, None]
    e = tl.where(cols[None, :] < N, tl.exp(shifted), 0.0)
    s = tl.sum(e, axis=1)[:, None]
    if LOG:
        y = shifted - tl.log(s)
    else:
        y = e / s
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.heuristics(HEURISTICS_CONFIGS["rms_norm"])
@triton.jit
def rms_norm_rows_kernel(x_ptr, w_ptr, out_ptr, M, N, eps, BLOCK_N: tl.constexpr,
                         ROWS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None].to(tl.int64) * N + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=1) / N + eps)
    w = tl.load(w_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
    y = x * rstd[:, None] * w[None, :]
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def softmax_long_kernel(x_ptr, out_ptr, N, LOG: tl.constexpr, BLOCK_N: tl.constexpr):
    # Rows too long for registers: online max/sum in one pass, normalise in a second.
    base = tl.program_id(0).to(tl.int64) * N
    m = tl.full([BLOCK_N], -float("inf"), tl.float32)
    s = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + base + cols, mask=cols < N, other=-float("inf")).to(tl.float32)
        new_m = tl.maximum(m, x)
        scale = tl.where(new_m == -float("inf"), 0.0, tl.exp(m - new_m))
        s = s * scale + tl.where(x == -float("inf"), 0.0, tl.exp(x - new_m))
        m = new_m
    row_max = tl.max(m, axis=0)
    row_sum = tl.sum(s * tl.where(m == -float("inf"), 0.0, tl.exp(m - row_max)), axis=0)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(x_ptr + base + cols, mask=mask, other=-float("inf")).to(tl.float32)
        if LOG:
            y = x - row_max - tl.log(row_sum)
        else:
            y = tl.exp(x - row_max) / row_sum
        tl.store(out_ptr + base + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def launch_rows(kernel, m, n, *args):
    rows = HEURISTICS_CONFIGS["softmax"]["ROWS"]({"N": n})
    kernel[(triton.cdiv(m, rows),)](*args)


MAX_N = 16384  # longer rows would spill registers at ROWS=1: they take the looped kernel
LONG_BLOCK = 4096


def softmax_last_dim(x, dim, dtype, log, name):
    """softmax (log=False) or log_softmax (log=True) along the last dim; shared by both ops."""
    if dim not in (-1, x.dim() - 1):
        raise NotImplementedError(f"{name}: only the last dim is supported, got dim={dim}")
    x = x.contiguous() if dtype is None else x.contiguous().to(dtype)
    n = x.shape[-1]
    m = x.numel() // n
    out = torch.empty_like(x)
    if n > MAX_N:
        softmax_long_kernel[(m,)](x, out, n, log, BLOCK_N=LONG_BLOCK, num_warps=8)
        return out
    launch_rows(softmax_rows_kernel, m, n, x, out, m, n, log)
    return out
