"""Validation of device names and commit arguments: usage errors, never paths.

Device names and commit ids become folder names and git arguments, so anything that could
escape `hardwares/` or be read as an option (`../x`, `--upload-pack=...`) is refused up front.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from flagbot.hooks.errors import UsageError

# letters and digits in groups joined by `_` (A_X100, NVIDIA_CambriconMLU, BI_V150_2)
DEVICE_RE = re.compile(r"[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+")
# a revision as users type it: an id, a branch or tag name, HEAD~2, v1.0^; no `/`, `..`, spaces
# a commit id, HEAD~2, a tag, or a branch name with folders (`vendor/A_X100`)
COMMIT_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.~^@{}+/-]*")
HEX_RE = re.compile(r"[0-9a-f]+")
MIN_PREFIX = 4


def check_device(name: str) -> str:
    """Return `name` if it is a device name like A_X100, else raise UsageError."""
    if not DEVICE_RE.fullmatch(name):
        raise UsageError(
            f"device type {name!r} is not valid",
            hint="use letters and digits with at least one '_', e.g. A_X100 or Cambricon_MLU370",
        )
    return name


def check_devices(names: Sequence[str]) -> list[str]:
    """Validate every device name; duplicates are a usage error too."""
    seen: list[str] = []
    for name in names:
        check_device(name)
        if name in seen:
            raise UsageError(f"device type {name!r} is given twice")
        seen.append(name)
    if not seen:
        raise UsageError("no device type given", hint="--device-type A_X100 [B_Y100 ...]")
    return seen


def check_commit(value: str, *, option: str) -> str:
    """Return `value` if it can only name a revision (no path tricks), else raise UsageError."""
    if not COMMIT_RE.fullmatch(value) or ".." in value or "@{" in value and "}" not in value \
            or "//" in value or "/." in value or value.endswith("/"):
        raise UsageError(
            f"{option} {value!r} is not a commit id or ref name",
            hint="give a commit id (at least 4 hex digits), a branch/tag name, or HEAD",
        )
    return value


def check_hex_prefix(value: str, *, option: str) -> str:
    """Return `value` lower-cased if it is at least 4 hex digits, else raise UsageError."""
    low = value.lower()
    if len(low) < MIN_PREFIX or len(low) > 64 or not HEX_RE.fullmatch(low):
        raise UsageError(
            f"{option} {value!r} must be a commit id prefix of at least {MIN_PREFIX} hex digits",
            hint="use the folder name under hardwares/<DEVICE>/ or the full base commit id",
        )
    return low

