"""The example behind `examples/replay/`: the example upstream plus pull request #1's branch.

`python -m testing.example_upstream` builds a small upstream and two vendor branches; this adds
the pull request a vendor would open from them: branch `a_x100-patch`, one commit on the base
that stores `hardwares/A_X100/ad96826c/ad96826c.patch` (the bytes `flagbot patch` writes for
the `a_x100` branch, kept in this repository's `hardwares/`). Dates and authors are pinned, so
the commit ids are the ones the payloads in `examples/replay/` name, on every machine.

    python -m testing.example_pr DIR     # builds DIR (must not exist) and prints the ids
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from testing import example_upstream

ROOT = Path(__file__).resolve().parent.parent
PR_BRANCH = "a_x100-patch"
PATCH = "hardwares/A_X100/ad96826c/ad96826c.patch"
PR_MESSAGE = "Add the A_X100 patch on ad96826c\n"


class ExamplePR(NamedTuple):
    """The example upstream, and the base and head of its pull request #1."""

    path: Path
    base: str
    head: str


def build(path: Path) -> ExamplePR:
    """Build the example upstream at `path` and commit PR #1's branch on its base."""
    example = example_upstream.build(path)
    git = example_upstream.git
    when = example_upstream.EPOCH + 3600  # after every vendor commit
    git(path, "checkout", "-q", "-b", PR_BRANCH, example.base, when=when)
    target = path / PATCH
    target.parent.mkdir(parents=True)
    target.write_bytes((ROOT / PATCH).read_bytes())
    git(path, "add", "-A", when=when)
    git(path, "commit", "-q", "-F", "-", when=when, data=PR_MESSAGE.encode())
    head = git(path, "rev-parse", "HEAD")
    git(path, "checkout", "-q", "main", when=when)
    return ExamplePR(path, example.base, head)


def main(argv: list[str] | None = None) -> int:
    target = example_upstream.new_folder(argv, "example_pr")
    if target is None:
        return 2
    example = build(target)
    print(f"upstream {example.path}\nbase     {example.base}\n{PR_BRANCH} {example.head}  (PR #1)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
