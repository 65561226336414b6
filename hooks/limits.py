"""Size limits on the files the checkers read, and a reader that keeps to them.

The checkers read files a pull request controls (the bot runs them on PR heads); a few
kilobytes in git can be megabytes on disk. A file over its limit is not read: the checker
reports it as a finding and moves on. The limits are far above any real file of its kind.
"""

from __future__ import annotations

import os
from pathlib import Path

# a Python or YAML source the backend checker parses (FlagGems' largest is ~0.1 MB)
MAX_SOURCE_BYTES = 1024 * 1024
# hardwares/hetero.txt (one short line per base)
MAX_HETERO_BYTES = 256 * 1024
# a stored vendor patch (binary hunks included)
MAX_PATCH_BYTES = 64 * 1024 * 1024


class TooLarge(OSError):
    """A file is over its size limit and was not read."""

    def __init__(self, path: Path | str, size: int, limit: int) -> None:
        super().__init__(f"{size} bytes, over the {limit}-byte limit for this kind of file; "
                         "not read")
        self.path = str(path)
        self.size = size
        self.limit = limit


def read_limited(path: Path | str, limit: int) -> bytes:
    """The bytes of `path`; TooLarge (an OSError) when it is longer than `limit`."""
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > limit:
            raise TooLarge(path, size, limit)
        data = fh.read(limit + 1)
    if len(data) > limit:  # grew while being read
        raise TooLarge(path, len(data), limit)
    return data
