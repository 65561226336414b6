"""flagbot: vendor patches, backend checks, a GitHub App and Triton kernel gates.

The code lives in the repository's top-level folders `hooks/`, `bot/` and `kernels/` (the
layout vendors know); this package names them `flagbot.hooks`, `flagbot.bot` and
`flagbot.kernels` through relative symbolic links, so nothing installs a generic top-level
name such as `kernels` (an unrelated PyPI distribution owns that one). A built wheel holds real
copies; an editable install and a plain checkout (`python -m flagbot.kernels` from the
repository root, as device runners do) resolve the links.
"""

__version__ = "0.1.0"
