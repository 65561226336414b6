"""Convert between FlagScale's per-file folders and the seed layout, both ways.

Per-file -> seed: a FlagScale-backend folder (plain, or encrypted given the key) is applied at
its `commit` in a scratch index, the result committed there, and the canonical series of that
one commit written to `<hardwares>/<DEV>/<base8>/<base8>.patch` only after the round trip is
proven (the series applied at the base gives the same tree; make.verify_generated). A folder
of a submodule backend is not convertible: its patches apply inside `third_party/<backend>`
at another repository's commit, and a seed-layout patch holds FlagScale commits only.

Seed -> per-file: the series is applied at its base and the result written the way FlagScale's
own tool writes it: one `git diff <base> <result> --binary` with git's default settings,
split before each `diff --git a/` line, each piece plus one newline stored at
`<hardwares>/<DEV>/FlagScale/<path>.patch`, and a `diff.yaml` dumped with sorted keys. The
`index` lines use git's automatic abbreviation (9 hex digits in a FlagScale clone of 2025), or
`abbrev` digits to match a folder written in a smaller clone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from flagbot.hooks import git
from flagbot.hooks.errors import FlagbotError
from flagbot.hooks.findings import Finding
from flagbot.hooks.patches import generate, hetero, patchfile, roundtrip
from flagbot.hooks.patches.make import verify_generated
from flagbot.hooks.patches.perfile import DIFF_YAML, FLAGSCALE, MAX_YAML_BYTES, Folder, read_meta
from flagbot.hooks.patches.perfile_verify import Item, encrypted_items, read_item, stage
from flagbot.hooks.patches.scratch import GitDir, Scratch
from flagbot.kernels.yamlload import safe_load_bounded

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey

_SPLIT = re.compile(rb"(?=^diff --git a/)", re.M)


@dataclass
class Conversion:
    """One folder's (or seed patch's) outcome: files to write, or why not."""

    source: str
    status: str = "error"  # converted | unchanged | skipped | error
    targets: dict[str, bytes] = field(default_factory=dict)
    reason: str = ""


def to_seed(repo: Path, folder: Folder, hardwares: str,
            key: RSAPrivateKey | None = None) -> Conversion:
    """The seed-layout patch equivalent to a FlagScale-backend folder, round trip proven."""
    out = Conversion(folder.rel)
    if folder.backend != FLAGSCALE:
        out.status = "skipped"
        out.reason = (f"its patches change the {folder.backend} submodule (third_party/"
                      f"{folder.backend}) at that repository's own commit; the seed layout "
                      "holds FlagScale commits only, so this folder stays per-file")
        return out
    if folder.encrypted and key is None:
        out.status = "skipped"
        out.reason = (f"{len(folder.encrypted)} encrypted patch file(s); pass --key-path DIR "
                      "(the vendor's private_key.pem) to convert it")
        return out
    meta, found = read_meta(repo, folder)
    if meta is None or meta.commit is None:
        out.reason = "; ".join(f.message for f in found) or "diff.yaml has no commit"
        return out
    findings: list[Finding] = []
    items = [i for rel in folder.plain if (i := read_item(repo, folder, rel, findings))]
    items += encrypted_items(repo, folder, key, findings)
    bad = [f for f in findings if f.severity == "error"]
    if bad:
        out.reason = f"{bad[0].path}: {bad[0].message}"
        return out
    if not git.has_object(repo, f"{meta.commit}^{{commit}}"):
        out.reason = f"its commit {meta.commit[:12]} is not in this repository; fetch it first"
        return out
    contact = str(meta.raw.get("contact") or "").strip()
    try:
        data = seed_series(repo, folder, meta.commit, items, hardwares, contact)
    except FlagbotError as exc:
        out.reason = str(exc)
        return out
    out.targets = {hetero.patch_rel(hardwares, folder.device, meta.commit[:8]): data}
    out.status = "converted"
    return out


def seed_series(repo: Path, folder: Folder, base: str, items: list[Item], hardwares: str,
                contact: str) -> bytes:
    """Apply the folder at `base`, commit, format the series and prove its round trip."""
    with Scratch(repo) as gd:
        gd.run(["read-tree", base])
        files = [str(stage(gd, n, item)) for n, item in enumerate(items)]
        proc = gd.run(["apply", "--cached", "--", *files], check=False)
        if proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            raise FlagbotError(f"does not apply at {base[:12]}: {'; '.join(err[:3])} (flagbot "
                               "verify names the file)")
        tree = gd.out(["write-tree"])
        when = gd.out(["log", "-1", "--format=%cd", "--date=raw", base])
        who = {"NAME": f"{folder.device} vendor", "EMAIL": contact or "vendor@invalid",
               "DATE": when}
        env = {f"GIT_{role}_{k}": v for role in ("AUTHOR", "COMMITTER") for k, v in who.items()}
        message = (f"[{folder.device}] FlagScale changes from {folder.rel}\n\n"
                   f"Converted from FlagScale's per-file layout ({len(items)} file(s), "
                   f"diff.yaml commit {base}).\n").encode()
        tip = gd.run(["commit-tree", tree, "-p", base], stdin=message, env=env).stdout.decode().strip()
        data = generate.format_patch(gd, base, tip, hardwares)
        listing = gd.run(roundtrip.ls_tree_args(base)).stdout
        changes = gd.run(roundtrip.changes_args(base, tip, hardwares)).stdout
        verify_generated(gd, base, tip, data, listing, changes)
    return data


def to_perfile(repo: Path, patch_rel: str, hardwares: str, *, tasks: list[str],
               contact: str = "", abbrev: int | None = None) -> Conversion:
    """FlagScale's per-file folder for a seed-layout patch, as FlagScale's tool would write it."""
    out = Conversion(patch_rel)
    parts = patch_rel.split("/")
    device = parts[-3] if len(parts) >= 3 else ""
    try:
        data = (repo / patch_rel).read_bytes()
        mails = patchfile.split_mails(data)
    except (OSError, patchfile.PatchFileError) as exc:
        out.reason = f"cannot read it as a patch series: {exc}"
        return out
    base = patchfile.base_commit(data)
    if base is None or not git.has_object(repo, f"{base}^{{commit}}"):
        out.reason = ("no base-commit line, or its base is not in this repository; run "
                      "`flagbot migrate` on it first (or fetch the base)")
        return out
    with Scratch(repo) as gd:
        try:
            applied = roundtrip.apply_series(gd, base, mails)
        except roundtrip.ApplyFailed as exc:
            out.reason = f"does not apply at {base[:12]}: {exc}"
            return out
        diff = flagscale_diff(gd, base, applied[-1].commit, abbrev)
    folder = f"{hardwares.strip('/')}/{device}/{FLAGSCALE}"
    out.targets = split_diff(diff, folder)
    if not same_base(repo, f"{folder}/{DIFF_YAML}", base):  # a vendor's own richer file stays
        out.targets[f"{folder}/{DIFF_YAML}"] = diff_yaml(base, device, tasks, contact)
    out.status = "converted"
    return out


def same_base(repo: Path, meta_rel: str, base: str) -> bool:
    """Whether an existing diff.yaml already records `base` as its commit."""
    import yaml

    try:
        doc = safe_load_bounded((repo / meta_rel).read_bytes()[:MAX_YAML_BYTES].decode("utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return False
    return isinstance(doc, dict) and doc.get("commit") == base


def flagscale_diff(gd: GitDir, base: str, tip: str, abbrev: int | None) -> bytes:
    """`git diff base tip --binary` as FlagScale's tool gets it (default settings, GitPython's
    output: the final newline stripped)."""
    width = "auto" if abbrev is None else str(abbrev)
    # FlagScale's tool diffs its own backend with submodule pointers left out
    proc = gd.run(["-c", f"core.abbrev={width}", "diff", "--binary", "--ignore-submodules=all",
                   base, tip])
    return proc.stdout[:-1] if proc.stdout.endswith(b"\n") else proc.stdout


def split_diff(diff: bytes, folder: str) -> dict[str, bytes]:
    """One file per `diff --git` section, named after its b/ path, each plus one newline."""
    out: dict[str, bytes] = {}
    for chunk in _SPLIT.split(diff):
        if not chunk.startswith(b"diff --git a/"):
            continue
        first = chunk.split(b"\n", 1)[0]
        path = patchfile.header_paths(first)[-1]
        out[f"{folder}/{path}.patch"] = chunk + b"\n"
    return out


def diff_yaml(base: str, device: str, tasks: list[str], contact: str) -> bytes:
    """The metadata file, dumped the way FlagScale's tool dumps it (sorted keys)."""
    import yaml

    doc = {"backends_commit": {}, "backends_version": {}, "commit": base, "contact": contact,
           "device_type": device, "models": [], "task": tasks}
    text: str = yaml.dump(doc, sort_keys=True, allow_unicode=True)
    return text.encode("utf-8")


def settle(repo: Path, conv: Conversion, *, dry_run: bool, replace_dir: str | None = None) -> Conversion:
    """Write a conversion's files unless `dry_run`; never overwrite different content.

    `replace_dir` is a folder the conversion recreates whole (a per-file folder): it must not
    exist yet, or already hold exactly these files.
    """
    if conv.status != "converted":
        return conv
    clash = [rel for rel, data in conv.targets.items()
             if (repo / rel).exists() and (repo / rel).read_bytes() != data]
    if replace_dir is not None and (repo / replace_dir).is_dir():
        extra = [p.relative_to(repo).as_posix() for p in (repo / replace_dir).rglob("*")
                 if p.is_file() and p.relative_to(repo).as_posix() not in conv.targets
                 and p.relative_to(repo).as_posix() != f"{replace_dir}/{DIFF_YAML}"]
        clash += extra[:5]
    if clash:
        conv.status = "error"
        conv.reason = (f"{clash[0]} already exists with other content; move it away (or "
                       "compare by hand) and run again")
        return conv
    if all((repo / rel).exists() for rel in conv.targets):
        conv.status = "unchanged"
        return conv
    if not dry_run:
        for rel, data in conv.targets.items():
            path = repo / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    return conv
