#!/usr/bin/env python3
"""FlagScale's original command `python tools/patch/patch.py`: a thin shim over `flagbot patch`.

Accepts exactly its flags (--device-type, --base-commit-id, --current-commit-id) and runs
on the repository containing the current directory, with flagbot's exit codes (0/1/2).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from flagbot.hooks import cli  # needs flagbot installed (`pip install .`, or -e in a checkout)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the original flags and run `flagbot patch`."""
    parser = argparse.ArgumentParser(prog="tools/patch/patch.py", description=__doc__)
    parser.add_argument("--device-type", nargs="+", required=True)
    parser.add_argument("--base-commit-id", required=True)
    parser.add_argument("--current-commit-id", default="HEAD")
    args = parser.parse_args(argv)
    return cli.main(["patch", "--device-type", *args.device_type, "--base-commit-id",
                     args.base_commit_id, "--current-commit-id", args.current_commit_id])


if __name__ == "__main__":
    raise SystemExit(main())
