"""Validation of device names and commit arguments: usage errors, never paths.

Device names and commit ids become folder names and git arguments, so anything that could
escape `hardwares/` or be read as an option (`../x`, `--upload-pack=...`) is refused up front.

The device-name rule (docs/reference.md, "Device names"): a device has one name, spelt as in
`hardwares/<NAME>/` (`A_X100`); names compare without regard to case, so `a_x100` is the same
device and a second spelling is refused; its FlagGems backend folder is `_` + the name in lower
case (`_a_x100`, as FlagGems imports `_<vendor_name>`); its `vendor:` label carries the
hardwares/ spelling.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

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


def backend_folder_name(device: str) -> str:
    """The FlagGems backend folder of a device: `_` + its name in lower case (A_X100 -> _a_x100)."""
    return "_" + device.lower()


def same_spelling(name: str, known: Iterable[str]) -> str | None:
    """The known device that `name` names with other letter case (None: none, or the same)."""
    for other in sorted(known):
        if other != name and other.lower() == name.lower():
            return other
    return None


def label_spelling(name: str, spellings: Iterable[str]) -> str:
    """How a device's `vendor:` label spells it: as hardwares/ or `devices:` do among
    `spellings` (the spelling with capitals: backend folders are all lower case), else `name`."""
    same = sorted(s for s in spellings if s.lower() == name.lower() and s != s.lower())
    return same[0] if same else name


def stored_devices(repo: Path, hardwares: str) -> list[str]:
    """Device folders under the hardwares folder (names that are device names)."""
    root = repo / hardwares
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir() and DEVICE_RE.fullmatch(p.name))


def check_spelling(names: Sequence[str], repo: Path, hardwares: str) -> None:
    """A name that differs only in case from a stored device is an error naming that device:
    it would start a second folder for the same device (and a second folder on a
    case-insensitive file system would be the first one)."""
    stored = stored_devices(repo, hardwares)
    for name in names:
        other = same_spelling(name, stored)
        if other is not None:
            raise UsageError(
                f"device type {name!r} differs only in case from the existing device {other!r} "
                f"({hardwares}/{other}/)",
                hint=f"device names ignore case; use --device-type {other}")


def check_devices(names: Sequence[str]) -> list[str]:
    """Validate every device name; duplicates (in any letter case) are a usage error too."""
    seen: list[str] = []
    for name in names:
        check_device(name)
        if name.lower() in (s.lower() for s in seen):
            raise UsageError(f"device type {name!r} is given twice (names ignore case)")
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

