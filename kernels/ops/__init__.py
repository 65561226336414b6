"""Generic Triton operators, one module per op; `flagbot.kernels.registry.OPS` lists them."""
