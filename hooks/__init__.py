"""flagbot's local side: vendor patches, the hetero index, checkers and pre-commit entry points."""

__version__ = "0.1.0"
