"""flagbot's device side: generic Triton ops, the accuracy/performance harness and its gates.

Imports only the standard library, torch, triton, numpy and PyYAML (a core dependency of
flagbot, which `flagbot[kernels]` installs): a device runner has nothing else. The backend
checker imports the torch-free layout modules (flaggems_layout, tune_configs, yamlload).
"""

__version__ = "0.1.0"
