"""The per-file half of `flagbot migrate`: FlagScale's per-file folders to the seed layout
(default), or seed-layout patches to per-file folders (`--to-perfile`). Reports one line per
folder or patch: the target, or the exact reason it was not converted."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from flagbot.hooks.errors import UsageError
from flagbot.hooks.patches.perfile import TASKS, find_folders, folders_for
from flagbot.hooks.patches.perfile_migrate import Conversion, settle, to_perfile, to_seed


def add_options(parser: argparse.ArgumentParser) -> None:
    """Flags of the per-file conversions."""
    parser.add_argument("--to-perfile", action="store_true",
                        help="write seed-layout PATCHes as FlagScale per-file folders "
                             "(<hardware>/<DEV>/FlagScale/<path>.patch + diff.yaml)")
    parser.add_argument("--key-path", metavar="DIR",
                        help="the vendor's private_key.pem (or its folder): convert encrypted "
                             "per-file folders too")
    parser.add_argument("--task", nargs="+", choices=TASKS, default=["train"],
                        help="with --to-perfile: diff.yaml's task (default: train)")
    parser.add_argument("--contact", default="", help="with --to-perfile: diff.yaml's contact")
    parser.add_argument("--encrypt-key", metavar="DIR",
                        help="with --to-perfile: store .patch.encrypted files under the "
                             "vendor's public_key.pem (or that PEM file), as FlagScale's "
                             "tool does with --key-path")
    parser.add_argument("--abbrev", type=int, choices=range(7, 41), metavar="N",
                        help="with --to-perfile: hex digits of the index lines (default: git's "
                             "automatic width, as FlagScale's tool; 9 in a FlagScale clone)")


def render(conv: Conversion, dry_run: bool) -> str:
    """One report line (plus the reason indented) per folder or patch."""
    targets = sorted(conv.targets)
    shown = targets[0] if len(targets) == 1 else \
        f"{os.path.commonpath(targets)}/ ({len(targets)} files)" if targets else ""
    if conv.status == "converted":
        return f"{'would convert' if dry_run else 'converted'} {conv.source} -> {shown}"
    if conv.status == "unchanged":
        return f"unchanged {conv.source} -> {shown}"
    return f"{conv.status} {conv.source}\n  {conv.reason}"


def encrypted(conv: Conversion, key_path: str | None) -> Conversion:
    """The conversion with each patch file encrypted (diff.yaml stays plain), given a key."""
    if key_path is None or conv.status != "converted":
        return conv
    from flagbot.hooks.patches.perfile_crypto import encrypt, load_public_key

    key = load_public_key(Path(key_path).resolve())
    conv.targets = {(rel + ".encrypted" if rel.endswith(".patch") else rel):
                    (encrypt(data, key) if rel.endswith(".patch") else data)
                    for rel, data in conv.targets.items()}
    return conv


def run(repo: Path, hardwares: str, rels: Sequence[str], args: argparse.Namespace) -> list[Conversion]:
    """Convert, print one entry each, return the outcomes."""
    if args.to_perfile:
        if not rels:
            raise UsageError("--to-perfile needs the seed-layout patches to convert",
                             hint="flagbot migrate --to-perfile hardware/DEV/<base8>/<base8>.patch")
        out = []
        for rel in rels:
            conv = encrypted(to_perfile(repo, rel, hardwares, tasks=args.task,
                                        contact=args.contact, abbrev=args.abbrev),
                             args.encrypt_key)
            folder = next(iter(conv.targets), "").rsplit("/", 1)[0] if conv.targets else None
            dest = f"{hardwares.strip('/')}/{rel.split('/')[-3]}/FlagScale" if folder else None
            out.append(settle(repo, conv, dry_run=args.dry_run, replace_dir=dest))
    else:
        key = None
        if args.key_path:
            from flagbot.hooks.patches.perfile_crypto import load_private_key

            key = load_private_key(Path(args.key_path).resolve())
        folders = folders_for(repo, hardwares, list(rels)) if rels else find_folders(repo, hardwares)
        out = [settle(repo, to_seed(repo, f, hardwares, key), dry_run=args.dry_run) for f in folders]
    for conv in out:
        print(render(conv, args.dry_run))
    return out
