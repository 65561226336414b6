# Trimmed for flagbot's tests: the upstream kernel needs a GPU and the whole flag_gems
# package; the function keeps its name and signature and computes the same result with torch.
import torch


def fused_add_rms_norm(x, residual, normalized_shape, weight, eps=1e-5):
    x = x + residual
    return torch.nn.functional.rms_norm(x, normalized_shape, weight, eps), x
