"""Static checks of vendor backend folders in the FlagGems layout; never imports them (docs/hooks.md).

The layout itself (required files, tune-file schema) is described once in
kernels/flaggems_layout.py and kernels/tune_configs.py, which the kernel harness uses too.
"""
