# Trimmed for flagbot's tests: the upstream kernel needs a GPU and the whole flag_gems
# package; the function keeps its name and signature and computes the same result with torch.
import torch

from flag_gems.utils import pointwise_dynamic  # noqa: F401  (resolves in this tree)


def gelu(self, *, approximate="none"):
    return torch.nn.functional.gelu(self, approximate=approximate)
