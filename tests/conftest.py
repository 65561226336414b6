"""Suite-wide environment: git identity and config pinned so no test depends on the machine."""

from __future__ import annotations

import os
import shutil

# Pinned before any test builds a repository; HOME-level config of the developer must not leak in
# (patch bytes are the contract). Tests that need "no identity" unset these themselves.
os.environ.setdefault("GIT_AUTHOR_NAME", "flagbot tests")
os.environ.setdefault("GIT_AUTHOR_EMAIL", "tests@flagbot.invalid")
os.environ.setdefault("GIT_COMMITTER_NAME", "flagbot tests")
os.environ.setdefault("GIT_COMMITTER_EMAIL", "tests@flagbot.invalid")
os.environ["GIT_CONFIG_NOSYSTEM"] = "1"

# Any test that imports flagbot.kernels.ops must see the interpreter on a machine without a GPU: Triton
# reads TRITON_INTERPRET when a kernel is decorated, and tests/kernels/conftest.py only covers
# tests under that folder. nvidia-smi stands in for "has a CUDA device" to avoid importing torch here.
if shutil.which("nvidia-smi") is None:
    os.environ.setdefault("TRITON_INTERPRET", "1")
