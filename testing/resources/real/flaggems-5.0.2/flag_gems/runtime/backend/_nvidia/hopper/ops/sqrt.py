# Trimmed for flagbot's tests: the upstream kernel needs a GPU and the whole flag_gems
# package; the function keeps its name and signature and computes the same result with torch.
import torch


def sqrt(A):
    return torch.sqrt(A)


def sqrt_(A):
    return A.sqrt_()
