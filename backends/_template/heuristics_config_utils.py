"""Launch parameters computed from kernel arguments at each call.

HEURISTICS_CONFIGS maps an op key to {parameter name: function(args) -> value}; a kernel uses
it as `@triton.heuristics(HEURISTICS_CONFIGS["<op>"])`. `args` holds the kernel's arguments by
name, including those the autotuner already chose (here BLOCK from tune_configs.yaml).
"""


def even_blocks(args):
    # No tail block: the kernel can skip its bounds mask.
    return args["n"] % args["BLOCK"] == 0


HEURISTICS_CONFIGS = {
    "silu": {"EVEN": even_blocks},
}
