"""Launch parameters computed from the arguments (FlagGems' HEURISTICS_CONFIGS form).

Row-wise ops: one program handles ROWS rows of BLOCK_N columns so that each program has about
TILE elements of work. The generic kernels use one row per program, which leaves most lanes of
a warp idle and the SMs starved of loads in flight when rows are short (attention rows of 128,
per-head norms); on H100 a 4-8K element tile keeps enough 16-byte loads in flight.
"""

import triton

TILE = 8192
MAX_ROWS = 64


def block_n(args):
    return triton.next_power_of_2(args["N"])


def rows_per_program(args):
    return max(1, min(MAX_ROWS, TILE // triton.next_power_of_2(args["N"])))


def row_warps(args):
    tile = rows_per_program(args) * triton.next_power_of_2(args["N"])
    return 4 if tile <= 2048 else (8 if tile <= 8192 else 16)


def mm_group_m(args):
    # Grouped tile order only pays when there are several row tiles to share B's columns.
    return 8 if args["M"] >= 512 else 1


HEURISTICS_CONFIGS = {
    "softmax": {"BLOCK_N": block_n, "ROWS": rows_per_program, "num_warps": row_warps},
    "log_softmax": {"BLOCK_N": block_n, "ROWS": rows_per_program, "num_warps": row_warps},
    "rms_norm": {"BLOCK_N": block_n, "ROWS": rows_per_program, "num_warps": row_warps},
    "mm": {"GROUP_M": mm_group_m},
}
