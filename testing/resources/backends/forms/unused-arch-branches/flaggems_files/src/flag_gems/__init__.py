from flag_gems.fused import *  # noqa: F403
from flag_gems.ops import *  # noqa: F403

_FULL_CONFIG = (
    ("add.Tensor", add),
    ("add_.Tensor", add_),
    ("cumsum", cumsum),
    ("mm", mm),
    ("softmax.int", softmax),
    ("cos", cos),
    ("lt.Scalar", lt_scalar),
)
