#!/usr/bin/env python3
"""FlagScale's original command `python tools/patch/unpatch.py`: a thin shim over `flagbot unpatch`.

Accepts exactly its flags (--device-type, --commit-id, --dir) and runs on the repository
containing the current directory, with flagbot's exit codes (0/1/2).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from flagbot.hooks import cli  # needs flagbot installed (`pip install .`, or -e in a checkout)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the original flags and run `flagbot unpatch`."""
    parser = argparse.ArgumentParser(prog="tools/patch/unpatch.py", description=__doc__)
    parser.add_argument("--device-type", nargs="+", required=True)
    parser.add_argument("--commit-id", required=True)
    parser.add_argument("--dir", default="build")
    args = parser.parse_args(argv)
    return cli.main(["unpatch", "--device-type", *args.device_type, "--commit-id",
                     args.commit_id, "--dir", args.dir])


if __name__ == "__main__":
    raise SystemExit(main())
