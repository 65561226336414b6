# Trimmed for flagbot's tests: the upstream kernel needs a GPU and the whole flag_gems
# package; the function keeps its name and signature and computes the same result with torch.
import torch


def mm(a, b):
    return (a.float() @ b.float()).to(a.dtype)


def mm_out(a, b, *, out):
    return out.copy_(mm(a, b))
