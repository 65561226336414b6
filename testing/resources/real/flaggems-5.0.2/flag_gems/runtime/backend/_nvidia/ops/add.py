# Trimmed for flagbot's tests: the upstream kernel needs a GPU and the whole flag_gems
# package; the function keeps its name and signature and computes the same result with torch.
import torch


def add(x: torch.Tensor, y: torch.Tensor):
    return x + y
