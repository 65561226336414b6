"""flagbot's device side: generic Triton ops, the accuracy/performance harness and its gates.

Imports only the standard library, torch, triton and numpy: a device runner has nothing else.
"""

__version__ = "0.1.0"
