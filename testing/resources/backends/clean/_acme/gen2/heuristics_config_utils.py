HEURISTICS_CONFIGS = {
    "mm": {
        "EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0,
    },
}
