"""Taking in generated operators: validate timing data, select by speed, import with metadata.

`perfdata` and `select` are pure data work and never import torch (they run on the light core
install); `schema`, `payload`, `probe` and `importer` need torch and triton.
"""
