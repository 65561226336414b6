"""One op, end to end: a Triton kernel tuned by tune_configs.yaml and heuristics."""

from pathlib import Path

import torch
import triton
import triton.language as tl
from backend_utils import get_tuned_config

from ..heuristics_config_utils import HEURISTICS_CONFIGS

TUNE_FILE = Path(__file__).resolve().parents[1] / "tune_configs.yaml"


@triton.autotune(configs=get_tuned_config("silu", TUNE_FILE), key=["n"])
@triton.heuristics(HEURISTICS_CONFIGS["silu"])
@triton.jit
def silu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        x = tl.load(x_ptr + offs).to(tl.float32)
    else:
        x = tl.load(x_ptr + offs, mask=offs < n).to(tl.float32)
    y = (x / (1.0 + tl.exp(-x))).to(out_ptr.dtype.element_ty)  # compute in fp32 for any input
    if EVEN:
        tl.store(out_ptr + offs, y)
    else:
        tl.store(out_ptr + offs, y, mask=offs < n)


def silu(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    silu_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n)
    return out
