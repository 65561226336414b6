"""The worked example behind `hardwares/`: a small FlagScale-like upstream and a vendor branch.

Every author, date and branch name is pinned, so the commit ids (and the patch bytes made from
them) are the same on every machine: the patches stored under `hardwares/` in this repository
are exactly what `flagbot patch` writes for this upstream, and a test keeps them so.

    python -m testing.example_upstream DIR     # builds DIR (must not exist) and prints the ids
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

EPOCH = 1_767_225_600  # 2026-01-01 00:00 UTC; each commit is one minute later

UPSTREAM = {
    "README.md": "# miniscale\n\nA tiny stand-in for a FlagScale-style training framework.\n",
    "flagscale/__init__.py": '"""miniscale: the package the vendor adapts."""\n',
    "flagscale/device.py": (
        '"""Which accelerator the framework runs on."""\n\n'
        'DEVICE = "cuda"\n\n\n'
        "def backend_name() -> str:\n"
        "    return DEVICE\n"
    ),
    "flagscale/train.py": (
        "from flagscale.device import backend_name\n\n\n"
        "def train(steps: int = 10) -> None:\n"
        '    print(f"training {steps} steps on {backend_name()}")\n'
    ),
    "flagscale/ops/attention.py": "BLOCK_M = 128\nBLOCK_N = 64\n",
}

ADAPTATIONS: dict[str, tuple[tuple[str, dict[str, str]], ...]] = {
    "A_X100": (
        ("[A_X100] select the vendor device\n\nThe runtime names its device through PrivateUse1.\n", {
            "flagscale/device.py": UPSTREAM["flagscale/device.py"].replace('"cuda"', '"a_x100"'),
            "flagscale/backends/a_x100.py": '"""Runtime hooks for A_X100 boards."""\n\nSTREAMS = 4\n',
        }),
        ("[A_X100] tune attention blocks for the vendor's SRAM\n", {
            "flagscale/ops/attention.py": "BLOCK_M = 64\nBLOCK_N = 64\n",
        }),
    ),
    "B_Y100": (
        ("[B_Y100] run on B_Y100 boards\n", {
            "flagscale/device.py": UPSTREAM["flagscale/device.py"].replace('"cuda"', '"b_y100"'),
            "flagscale/backends/b_y100.py": '"""Runtime hooks for B_Y100 boards."""\n\nSTREAMS = 2\n',
        }),
    ),
}


def branch(device: str) -> str:
    """The example's vendor branch for `device` (the device name in lower case)."""
    return device.lower()


class Example(NamedTuple):
    """Where the example was built, its base commit and each device's vendor head."""

    path: Path
    base: str
    heads: dict[str, str]


def _git_env(when: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    stamp = f"@{when} +0000"
    env.update(GIT_AUTHOR_NAME="Vera Vendor", GIT_AUTHOR_EMAIL="vera@vendor.invalid",
               GIT_COMMITTER_NAME="Vera Vendor", GIT_COMMITTER_EMAIL="vera@vendor.invalid",
               GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp,
               GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", LC_ALL="C")
    return env


def git(path: Path, *args: str, when: int = EPOCH, data: bytes | None = None) -> str:
    """git in `path` with the example's pinned identity and dates (testing/example_pr.py too)."""
    proc = subprocess.run(["git", "-c", "commit.gpgsign=false", *args], cwd=path, input=data,
                          env=_git_env(when), capture_output=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {proc.stderr.decode(errors='replace')}")
    return proc.stdout.decode().strip()


def commit(path: Path, files: dict[str, str], message: str, when: int) -> str:
    """Write `files`, commit them with `message` at `when`, return the new commit id."""
    for rel, text in files.items():
        target = path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    git(path, "add", "-A", when=when)
    git(path, "commit", "-q", "--cleanup=verbatim", "-F", "-", when=when, data=message.encode())
    return git(path, "rev-parse", "HEAD")


def build(path: Path) -> Example:
    """Create the upstream at `path` (a new folder): `main` at BASE, one branch per device."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    when = EPOCH
    base = commit(path, dict(UPSTREAM), "miniscale: first release\n", when)
    heads = {}
    for device, commits in ADAPTATIONS.items():
        git(path, "checkout", "-q", "-b", branch(device), base)
        for message, files in commits:
            when += 60
            heads[device] = commit(path, files, message, when)
    git(path, "checkout", "-q", "main")
    return Example(path, base, heads)


def new_folder(argv: list[str] | None, module: str) -> Path | None:
    """The one DIR argument of `python -m testing.<module> DIR`, a folder that must not exist
    yet; None after saying what is wrong."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print(f"usage: python -m testing.{module} DIR", file=sys.stderr)
        return None
    target = Path(args[0])
    if target.exists():
        print(f"error: {target} exists; name a new folder", file=sys.stderr)
        return None
    return target


def main(argv: list[str] | None = None) -> int:
    target = new_folder(argv, "example_upstream")
    if target is None:
        return 2
    example = build(target)
    print(f"upstream {example.path}\nbase     {example.base}")
    for device, head in example.heads.items():
        print(f"{branch(device):<8} {head}  ({device})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
