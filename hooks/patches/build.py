"""Build DIR/<DEV>/<repo-name>/ = BASE with DEV's stored patch applied as commits.

The build is a standalone repository: `git clone --no-checkout` of the source (objects are
hard-linked, so it survives `git gc --prune=now` in the source and registers nothing there),
the mails applied into its index with `git am` semantics (authors, dates, messages kept; the
committer is the author, so no user identity is needed and rebuilds give the same ids), then
one checkout of the final tree. It is built beside the target and swapped in only when done,
so a failure leaves any previous build as it was.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from flagbot.hooks import git
from flagbot.hooks.errors import CheckFailed, UsageError
from flagbot.hooks.folders import configured_folder, hetero_file
from flagbot.hooks.patches import hetero, patchfile, roundtrip, verify
from flagbot.hooks.patches.devices import check_devices, check_hex_prefix, check_spelling
from flagbot.hooks.patches.scratch import GitDir

MARKER = "flagbot-build"  # inside the build's .git: the commit flagbot left HEAD at


@dataclass(frozen=True)
class Build:
    """One finished build: where, which base, which tip, how many vendor commits."""

    device: str
    path: Path
    base: str
    tip: str
    commits: int
    # "path: index line says X, applying gives Y" per file a hand edit changed: the tree is
    # built as stored, and `flagbot unpatch` warns
    hand_edited: tuple[str, ...] = ()


def stored_bases(repo: Path, hardwares: str, device: str) -> dict[str, str]:
    """base8 -> repository-relative patch path, for every stored patch of `device`."""
    root = repo / hardwares / device
    found: dict[str, str] = {}
    if root.is_dir():
        for folder in sorted(root.iterdir()):
            rel = hetero.patch_rel(hardwares, device, folder.name)
            if hetero.BASE8_RE.fullmatch(folder.name) and (repo / rel).is_file():
                found[folder.name] = rel
    return found


def resolve_base(repo: Path, hardwares: str, device: str, prefix: str) -> tuple[str, str]:
    """(full base id, patch path) for a unique prefix among the device's stored bases."""
    bases = stored_bases(repo, hardwares, device)
    if not bases:
        from flagbot.hooks.patches.perfile import unpatch_hint

        hint = unpatch_hint(repo, hardwares, device)
        if hint is not None:
            raise UsageError(f"device {device} has no seed-layout patch", hint=hint)
        raise UsageError(f"device {device} has no stored patches under {hardwares}/{device}/",
                         hint="check the device name, or make one with flagbot patch")
    matches: list[tuple[str, str]] = []
    for base8, rel in bases.items():
        if not base8.startswith(prefix[:8]):
            continue
        full = patchfile.base_commit((repo / rel).read_bytes()) or base8
        if full.startswith(prefix):
            matches.append((full, rel))
    listing = ", ".join(bases)
    if not matches:
        raise UsageError(f"no stored base of {device} starts with {prefix!r}; stored: {listing}",
                         hint=f"pick one of: {listing}")
    if len(matches) > 1:
        raise UsageError(f"{prefix!r} is ambiguous for {device}: "
                         + ", ".join(m[0][:12] for m in matches),
                         hint="give more hex digits")
    return matches[0]


def check_hetero_listing(repo: Path, hardwares: str, devices: list[str], base8: str) -> None:
    """Several devices: hetero.txt must list all of them for the base."""
    rel = hetero_file(repo, hardwares)
    path = repo / rel
    try:
        listed = hetero.parse(path.read_text(encoding="utf-8")).devices_for(base8)
    except FileNotFoundError:
        listed = []
    except (OSError, UnicodeDecodeError, hetero.HeteroError) as exc:
        raise UsageError(f"{path}: {exc}", hint="fix hetero.txt (flagbot hetero check)") from exc
    missing = [d for d in devices if d not in listed]
    if missing:
        raise UsageError(
            f"{rel} does not list {' '.join(missing)} for base {base8}"
            f" (listed: {' '.join(listed) or 'none'})",
            hint="a heterogeneous build needs the line made by "
                 f"flagbot patch --device-type {' '.join(devices)} --base-commit-id {base8}")


def resolve_patches(repo: Path, hardwares: str, devices: Sequence[str],
                    want: str) -> tuple[str, list[str]]:
    """(full base id, each device's patch path) for the base prefix `want`: one base for every
    device (listed together in hetero.txt when several), each patch passing verify's checks of
    the stored file. UsageError or CheckFailed otherwise."""
    resolved = [resolve_base(repo, hardwares, d, want) for d in devices]
    bases = sorted({full for full, _ in resolved})
    if len(bases) > 1:
        raise UsageError(f"{want} names different bases for the devices: "
                         + ", ".join(b[:12] for b in bases), hint="give more hex digits")
    base = bases[0]
    if len(devices) > 1:
        check_hetero_listing(repo, hardwares, list(devices), base[:8])
    rels = [rel for _, rel in resolved]
    for rel in rels:
        bad = [f for f in verify.read_checked(repo, rel, hardwares)[1] if f.severity == "error"]
        if bad:
            raise CheckFailed(f"{rel}: {bad[0].message}", hint="run flagbot verify " + rel)
    return base, rels


def apply_stored(gd: GitDir, base: str, data: bytes, patch_rel: str) -> list[roundtrip.Applied]:
    """The stored patch `data`'s mails applied as commits on `base` in `gd` (`git am`
    semantics); CheckFailed naming the line of the first that does not apply."""
    try:
        return roundtrip.apply_series(gd, base, patchfile.split_mails(data))
    except roundtrip.ApplyFailed as exc:
        raise CheckFailed(f"{patch_rel}:{exc.line}: {exc}",
                          hint="run flagbot verify on it; regenerate it with flagbot patch"
                          ) from exc


def local_changes(target: Path) -> str | None:
    """Why replacing `target` could lose work, or None if it is an untouched flagbot build."""
    if not target.exists():
        return None
    marker = target / ".git" / MARKER
    if not marker.is_file():
        return "it exists and is not a flagbot build"
    status = git.run(["status", "--porcelain", "--untracked-files=normal"], cwd=target,
                     check=False)
    if status.returncode != 0:
        return "git status fails there"
    if status.stdout.strip():
        return "it has uncommitted or untracked changes"
    head = git.run(["rev-parse", "HEAD"], cwd=target, check=False).stdout.decode().strip()
    if head != marker.read_text().strip():
        return "its HEAD moved since flagbot built it (new commits?)"
    return None


def build_one(repo: Path, device: str, base: str, patch_rel: str, target: Path) -> Build:
    """Clone, apply the device's mails as commits, check out once, swap into `target`."""
    data = (repo / patch_rel).read_bytes()
    target.parent.mkdir(parents=True, exist_ok=True)
    for stale in target.parent.glob(f".{target.name}.flagbot-*"):
        shutil.rmtree(stale, ignore_errors=True)  # left by a killed run; only flagbot names these
    tmp = target.parent / f".{target.name}.flagbot-{os.getpid()}-{os.urandom(4).hex()}"
    try:
        tmp.mkdir()  # inside the try: a Ctrl-C right after creating it still cleans it up
        work = tmp / target.name
        git.run(["clone", "--quiet", "--no-checkout", "--no-tags", str(repo), str(work)],
                cwd=tmp)
        gd = GitDir(work / ".git", work / ".git" / "index", work / ".git", work / ".git")
        applied = apply_stored(gd, base, data, patch_rel)
        tip = applied[-1].commit
        # stored patches are sometimes edited by hand: built as they are, but said so
        hand_edited = tuple(roundtrip.post_image_mismatches(gd, applied, base))
        for scratch_file in ("am-msg", "am-patch"):
            (work / ".git" / scratch_file).unlink(missing_ok=True)
        # the clone's own copy of the source's current branch would only confuse: the build
        # has one local branch, named after the device, ending in the vendor commits
        old = gd.run(["symbolic-ref", "--quiet", "HEAD"], check=False).stdout.decode().strip()
        gd.run(["update-ref", f"refs/heads/{device}", tip])
        gd.run(["symbolic-ref", "HEAD", f"refs/heads/{device}"])
        if old and old != f"refs/heads/{device}":
            gd.run(["update-ref", "-d", old], check=False)
        (work / ".git" / "index").unlink()
        git.run(["reset", "--quiet", "--hard", tip], cwd=work)  # the same checkout as git worktree add
        (work / ".git" / MARKER).write_text(f"{tip}\n")
        swap_in(work, target)
        return Build(device, target, base, tip, len(applied), hand_edited)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def swap_in(new: Path, target: Path) -> None:
    """Move `new` to `target`, moving a previous build aside first and deleting it after."""
    trash = None
    if target.exists():
        trash = new.parent / "previous"
        os.rename(target, trash)
    os.rename(new, target)


def unpatch(repo: Path, devices: Sequence[str], prefix: str, *, build_dir: str = "build",
            force: bool = False, hardwares: str | None = None) -> list[Build]:
    """Build one tree per device (library entry); UsageError/CheckFailed on bad input."""
    devs = check_devices(devices)
    want = check_hex_prefix(prefix, option="--commit-id")
    hw = configured_folder(repo, "hardwares", hardwares)
    check_spelling(devs, repo, hw)
    base, rels = resolve_patches(repo, hw, devs, want)
    if not git.has_object(repo, f"{base}^{{commit}}"):
        raise UsageError(f"base commit {base[:12]} is not in this repository",
                         hint="fetch it (git fetch origin, or git fetch --unshallow)")
    targets = [Path(repo, build_dir, d, repo.name) for d in devs]
    for target in targets:
        reason = local_changes(target)
        if reason and not force:
            raise UsageError(f"refusing to replace {target}: {reason}",
                             hint="save your work elsewhere, or pass --force to discard it")
    return [build_one(repo, d, base, rel, t) for d, rel, t in zip(devs, rels, targets, strict=True)]
