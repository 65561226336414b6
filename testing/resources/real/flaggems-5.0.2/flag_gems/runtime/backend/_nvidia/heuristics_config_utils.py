# Trimmed for flagbot's tests: upstream holds 531 lines of heuristics; one kept.
def simple_elementwise_blocksize_heur(args):
    return 1024


HEURISTICS_CONFIGS = {
    "elementwise_generic": {
        "BLOCK_SIZE": simple_elementwise_blocksize_heur,
    },
}
