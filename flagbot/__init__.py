"""flagbot: vendor patches, backend checks, a GitHub App and Triton kernel gates.

The code lives in the repository's top-level folders `hooks/`, `bot/` and `kernels/` (the
layout vendors know); packaging maps them to `flagbot.hooks`, `flagbot.bot` and
`flagbot.kernels` (`package-dir` in pyproject.toml), so nothing installs a generic top-level
name such as `kernels` (an unrelated PyPI distribution owns that one). Import flagbot from an
install (a wheel, or `pip install -e .` in a checkout): the checkout alone does not resolve
`flagbot.hooks`.
"""

__version__ = "0.1.0"
