"""Generic Triton operators, one module per op; `kernels.registry.OPS` lists them."""
