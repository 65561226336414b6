"""Elementwise launch shared by add, mul, gelu and silu: any shape, strides and broadcasting.

Three paths, cheapest first:
- flat: every operand covers one dense block of memory in the same layout (contiguous, or
  permuted such as a transpose): one pass over the storage, the output takes the same strides.
  Full tiles load and store without masks (16-byte vectors); only the last tile is masked, so
  element counts that are not multiples of 16 keep full-width accesses.
- strided: the output seen as at most three dims after merging dims that every operand walks
  in step; a [rows, cols] tile per program reads each operand through its own strides, zero for
  broadcast dims, so `[M, N] + [N]` and sliced views are read in place. The output is laid
  out as the first operand that covers it densely (as torch's is), and walked in that order.
- otherwise (more than three dims that do not merge) operands are copied to contiguous first.
"""
# Triton kernels take DSL-typed arguments that Python annotations cannot express.
# mypy: disable-error-code="untyped-decorator,no-untyped-def"

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl

from flagbot.kernels.ops._host import (
    broadcast_shape,
    broadcast_strides,
    cdiv,
    fewer_rows,
    next_power_of_2,
)
from flagbot.kernels.ops._layout import is_dense, storage_order

FLOAT_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
TILE = 4096  # elements per program on the strided path
# Strided grids of fewer programs than this take shorter tiles, down to SMALL_TILE elements (4
# a thread at 4 warps): 4096-element tiles left 4097x8 sliced fp32 GELU 9 programs, each thread
# computing 32 erfs in turn, at 10.9 us where torch took 5.6 (9x511: 2 programs, 15.7 us vs
# 5.2; H100, 2026-11-27 sweep readings; the shorter tiles are not timed yet).
FEW_PROGRAMS, SMALL_TILE = 132, 512


@triton.jit
def _erf_as(x):
    # Abramowitz & Stegun 7.1.26: |error| < 1.5e-7, about a third of libdevice erf's
    # instructions. Used for 16-bit outputs only, whose rounding (>= 4.9e-4 relative) dwarfs
    # the error; at 2 bytes per element erf's cost, not memory, bounds exact GELU.
    a = tl.abs(x)
    t = tl.fdiv(1.0, 1.0 + 0.3275911 * a, ieee_rounding=False)  # approximate reciprocal
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027
                                                                         + t * 1.061405429))))
    y = 1.0 - poly * tl.exp(-a * a)
    return tl.where(x < 0, -y, y)


@triton.jit
def _apply(x, y, alpha, OP: tl.constexpr):
    if OP == "add":
        r = x + alpha * y
    elif OP == "mul":
        r = x * y
    elif OP == "silu":
        r = x / (1.0 + tl.exp(-x))
    elif OP == "gelu_tanh":
        # tanh(z) = 2*sigmoid(2z) - 1: libdevice.tanh is not portable (the CPU interpreter
        # returns None for every libdevice call), tl.exp is.
        z = 0.7978845608028654 * (x + 0.044715 * x * x * x)
        r = 0.5 * x * (1.0 + (2.0 / (1.0 + tl.exp(-2.0 * z)) - 1.0))
    elif OP == "gelu_fast":
        r = 0.5 * x * (1.0 + _erf_as(x * 0.7071067811865476))
    else:  # "gelu"
        r = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    return r


@triton.jit
def _flat_kernel(x_ptr, y_ptr, out_ptr, n, alpha, OP: tl.constexpr, BINARY: tl.constexpr,
                 BLOCK: tl.constexpr):
    start = tl.program_id(0).to(tl.int64) * BLOCK
    offs = start + tl.arange(0, BLOCK)
    if start + BLOCK <= n:
        x = tl.load(x_ptr + offs).to(tl.float32)
        y = x
        if BINARY:
            y = tl.load(y_ptr + offs).to(tl.float32)
        tl.store(out_ptr + offs, _apply(x, y, alpha, OP).to(out_ptr.dtype.element_ty))
    else:
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
        y = x
        if BINARY:
            y = tl.load(y_ptr + offs, mask=mask).to(tl.float32)
        tl.store(out_ptr + offs, _apply(x, y, alpha, OP).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _strided_kernel(x_ptr, y_ptr, out_ptr, d1, d2, tiles_r, tiles_c, sx0, sx1, sx2, sy0, sy1,
                    sy2, alpha, OP: tl.constexpr, BINARY: tl.constexpr, BLOCK_R: tl.constexpr,
                    BLOCK_C: tl.constexpr):
    pid = tl.program_id(0)
    tc = pid % tiles_c
    rest = pid // tiles_c
    tr = rest % tiles_r
    i0 = (rest // tiles_r).to(tl.int64)
    r = (tr * BLOCK_R + tl.arange(0, BLOCK_R)).to(tl.int64)
    c = (tc * BLOCK_C + tl.arange(0, BLOCK_C)).to(tl.int64)
    mask = (r[:, None] < d1) & (c[None, :] < d2)
    x = tl.load(x_ptr + i0 * sx0 + r[:, None] * sx1 + c[None, :] * sx2, mask=mask)
    x = x.to(tl.float32)
    y = x
    if BINARY:
        y = tl.load(y_ptr + i0 * sy0 + r[:, None] * sy1 + c[None, :] * sy2, mask=mask)
        y = y.to(tl.float32)
    out = out_ptr + (i0 * d1 + r[:, None]) * d2 + c[None, :]
    tl.store(out, _apply(x, y, alpha, OP).to(out_ptr.dtype.element_ty), mask=mask)


def check_operands(name: str, *tensors: Any) -> None:
    """Refuse what the kernels do not compute: non-tensors, other dtypes, mixed dtypes/devices."""
    for t in tensors:
        if not isinstance(t, torch.Tensor):
            raise NotImplementedError(f"{name}: tensor operands only, got {type(t).__name__}")
        if t.dtype not in FLOAT_DTYPES:
            raise NotImplementedError(f"{name}: float32/float16/bfloat16 only, got {t.dtype}")
    if len({t.dtype for t in tensors}) > 1:
        raise NotImplementedError(f"{name}: operands of one dtype only (no type promotion), got "
                                  f"{', '.join(str(t.dtype) for t in tensors)}")
    if len({t.device for t in tensors}) > 1:
        raise NotImplementedError(f"{name}: operands on one device only")


def merge_dims(shape: tuple[int, ...],
               strides: list[tuple[int, ...]]) -> tuple[list[int], list[list[int]]]:
    """Drop size-1 dims and merge neighbours that every operand walks in step."""
    dims = [i for i, n in enumerate(shape) if n != 1]
    sizes: list[int] = []
    merged: list[list[int]] = [[] for _ in strides]
    for i in dims:
        if sizes and all(m[-1] == s[i] * shape[i] for m, s in zip(merged, strides, strict=True)):
            sizes[-1] *= shape[i]
            for m, s in zip(merged, strides, strict=True):
                m[-1] = s[i]
            continue
        sizes.append(shape[i])
        for m, s in zip(merged, strides, strict=True):
            m.append(s[i])
    return sizes, merged


def _same_dense_layout(tensors: list[torch.Tensor]) -> bool:
    first = tensors[0]
    if any(t.shape != first.shape for t in tensors[1:]):
        return False
    if all(t.is_contiguous() for t in tensors):
        return True  # the common case, without is_dense's walk over the strides in Python
    return is_dense(first) and all(t.stride() == first.stride() for t in tensors[1:])


def _launch_strided(out: torch.Tensor, operands: list[torch.Tensor], sizes: list[int],
                    strides: list[list[int]], op: str, alpha: float, warps: int) -> None:
    while len(sizes) < 3:
        sizes.insert(0, 1)
        for s in strides:
            s.insert(0, 0)
    d0, d1, d2 = sizes
    block_c = min(next_power_of_2(d2), 1024)
    block_r = max(1, min(TILE // block_c, next_power_of_2(d1)))
    tiles_c = cdiv(d2, block_c)
    block_r = fewer_rows(block_r, d1, cdiv(FEW_PROGRAMS, d0 * tiles_c),
                         least=max(1, SMALL_TILE // block_c))
    tiles_r = cdiv(d1, block_r)
    x, y = operands[0], operands[-1]
    sx, sy = strides[0], strides[-1]
    kernel: Any = _strided_kernel
    kernel[(d0 * tiles_r * tiles_c,)](x, y, out, d1, d2, tiles_r, tiles_c, *sx, *sy, alpha,
                                      OP=op, BINARY=len(operands) == 2, BLOCK_R=block_r,
                                      BLOCK_C=block_c, num_warps=warps)


def pointwise(op: str, operands: list[torch.Tensor], *, alpha: float = 1.0,
              block: tuple[int, int] = (2048, 8), block_16: tuple[int, int] = (2048, 8)
              ) -> torch.Tensor:
    """`op` over one or two float tensors of one dtype, broadcast like torch; fp32 arithmetic.

    block / block_16: (elements per program, warps) of the flat path for 4- and 2-byte dtypes.
    """
    shape = broadcast_shape(*(t.shape for t in operands))
    dtype = operands[0].dtype
    elems, warps = block_16 if dtype.itemsize == 2 else block
    binary = len(operands) == 2
    if _same_dense_layout(operands) and operands[0].shape == shape:
        out = torch.empty_like(operands[0])
        n = out.numel()
        if n:
            x, y = operands[0], operands[-1]
            kernel: Any = _flat_kernel
            kernel[(cdiv(n, elems),)](x, y, out, n, alpha, OP=op, BINARY=binary,
                                      BLOCK=elems, num_warps=warps)
        return out
    # Strides of the broadcast views, worked out in plain Python: the kernel reads each operand
    # from its own data pointer with these strides, so no expanded view is built per call.
    strides = [broadcast_strides(t.shape, t.stride(), shape) for t in operands]
    order = output_order(operands, shape)
    walk = shape
    if order == sorted(order):  # row-major, the common case
        out = torch.empty(shape, dtype=dtype, device=operands[0].device)
    else:
        walk = tuple(shape[d] for d in order)  # the dims in the order the output is stored
        out_strides = [0] * len(shape)
        step = 1
        for d in reversed(order):
            out_strides[d] = step
            step *= shape[d]
        out = torch.empty_strided(shape, out_strides, dtype=dtype, device=operands[0].device)
        strides = [tuple(s[d] for d in order) for s in strides]
    if 0 in shape:
        return out
    # the kernel writes `out` through its data pointer, walking `walk` in storage order
    sizes, merged = merge_dims(walk, strides)
    if len(sizes) > 3:
        return pointwise(op, [t.expand(shape).contiguous() for t in operands], alpha=alpha,
                         block=block, block_16=block_16)
    _launch_strided(out, operands, sizes, merged, op, alpha, 4 if elems <= 2048 else warps)
    return out


def output_order(operands: list[torch.Tensor], shape: tuple[int, ...]) -> list[int]:
    """The dims of the output from outermost to innermost in memory: those of the first operand
    that covers the whole output densely (a transposed input broadcast against a vector, say),
    as torch lays its output out; else row-major. The strided kernel walks the output in this
    order, so that operand is read in long contiguous runs as the output is written in them:
    a row-major output over a transposed input reads it one element per row of the tile."""
    for t in operands:
        if tuple(t.shape) == shape:
            if t.is_contiguous():
                break
            if is_dense(t):
                return storage_order(t)
    return list(range(len(shape)))
