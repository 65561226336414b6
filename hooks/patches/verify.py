"""Checks of stored patches: layout (fast, no history) and the full apply + regenerate check.

Library API used by the bot and pre-commit hooks; everything returns `list[Finding]` with the
patch path relative to the repository and, where it makes sense, the line in the patch file.
Nothing is ever written into the repository: the full check runs in a scratch git dir.
Safe to call from several threads on different repositories (no globals, no chdir).
"""

from __future__ import annotations

import re
from pathlib import Path

from flagbot.hooks import git
from flagbot.hooks.findings import ERROR, WARNING, Finding
from flagbot.hooks.limits import MAX_PATCH_BYTES, read_limited
from flagbot.hooks.patches import generate, patchfile, roundtrip
from flagbot.hooks.patches.devices import DEVICE_RE
from flagbot.hooks.patches.scratch import Scratch

_PATCH_NAME = re.compile(r"([0-9a-f]{8})\.patch")
# FlagScale's original tools could store a patch encrypted with the vendor's RSA key; it is
# listed so nobody mistakes it for checked, but its content cannot be read here.
ENCRYPTED = ".patch.encrypted"
PATCH_SUFFIXES = (".patch", ENCRYPTED)


def find_patches(repo: Path, hardwares: str = "hardwares") -> list[str]:
    """Repository-relative `*.patch` and `*.patch.encrypted` files under hardwares/, sorted."""
    root = repo / hardwares
    if not root.is_dir():
        return []
    return sorted(p.relative_to(repo).as_posix() for p in root.rglob("*.patch*")
                  if p.name.endswith(PATCH_SUFFIXES) and p.is_file())


def is_patch_path(rel: str) -> bool:
    """Whether `rel` names a stored patch (plain or encrypted)."""
    return rel.endswith(PATCH_SUFFIXES)


def encrypted_finding(patch_rel: str) -> Finding:
    """The warning for an encrypted patch: present, listed, not verifiable."""
    return Finding(patch_rel, 0, WARNING, "patch-encrypted",
                   "stored encrypted, so it was not applied or verified (flagbot has no key); "
                   "to have it checked, decrypt it with the vendor's key and run flagbot "
                   "migrate on the plain .patch")


def old_format_finding(patch_rel: str) -> Finding:
    """The one finding for a patch written by FlagScale's original tools (no base-commit line)."""
    return Finding(patch_rel, 0, ERROR, "patch-old-format",
                   "written by the original patch tools (no 'base-commit:' line, so its base "
                   f"is only the folder name); convert it with `flagbot migrate {patch_rel}`, "
                   "which applies it at that base and rewrites it in canonical form")


def layout_problem(patch_rel: str, hardwares: str) -> str | None:
    """Why `patch_rel` is not `<hardwares>/<DEV>/<base8>/<base8>.patch`, or None."""
    prefix = hardwares.rstrip("/") + "/"
    parts = patch_rel[len(prefix):].split("/") if patch_rel.startswith(prefix) else []
    if len(parts) != 3:
        return f"patches live at {hardwares}/<DEVICE>/<base8>/<base8>.patch"
    dev, folder, name = parts
    if not DEVICE_RE.fullmatch(dev):
        return f"folder {dev!r} is not a device name like A_X100"
    match = _PATCH_NAME.fullmatch(name)
    if not match or match.group(1) != folder:
        return f"file and folder must both be the first 8 hex digits of the base ({folder!r})"
    return None


def read_checked(repo: Path, patch_rel: str, hardwares: str) -> tuple[bytes | None, list[Finding]]:
    """The patch bytes and its layout findings (name, base-commit line, parseable mails).

    An encrypted patch gives only its warning; an old-format one (mails without a
    `base-commit:` line) the finding that points at `flagbot migrate` instead of layout ones.
    """
    if patch_rel.endswith(ENCRYPTED):
        return None, [encrypted_finding(patch_rel)]
    problem = layout_problem(patch_rel, hardwares)
    findings = [Finding(patch_rel, 0, ERROR, "patch-layout", problem)] if problem else []
    try:
        data = read_limited(repo / patch_rel, MAX_PATCH_BYTES)
    except OSError as exc:
        return None, findings + [Finding(patch_rel, 0, ERROR, "patch-corrupt",
                                         f"cannot read: {exc.strerror or exc}")]
    try:
        patchfile.split_mails(data)
    except patchfile.PatchFileError as exc:
        return None, findings + [Finding(patch_rel, exc.line, ERROR, "patch-corrupt",
                                         f"not a format-patch series: {exc}; regenerate it "
                                         "with flagbot patch")]
    base = patchfile.base_commit(data)
    if base is None:  # its folder layout is migrate's business: one finding, not several
        findings = [old_format_finding(patch_rel)]
    elif not problem and patch_rel.rsplit("/", 2)[1] != base[:8]:
        findings.append(Finding(patch_rel, 0, ERROR, "patch-layout",
                                f"base-commit {base[:12]} does not match folder "
                                f"{patch_rel.rsplit('/', 2)[1]}; move the file to "
                                f"<DEVICE>/{base[:8]}/{base[:8]}.patch"))
    for path in patchfile.unrepresentable_binaries(data):
        findings.append(Finding(patch_rel, 0, ERROR, "patch-corrupt",
                                f"binary file {path} has no data ('Binary files differ')"))
    return data, findings


def check_layout(repo: Path, hardwares: str = "hardwares") -> list[Finding]:
    """Fast checks of every stored patch: names, base-commit line, parseable mails."""
    findings: list[Finding] = []
    for rel in find_patches(repo, hardwares):
        findings += read_checked(repo, rel, hardwares)[1]
    return findings


def missing_base_advice(repo: Path, base: str = "BASE") -> str:
    """What to do about a base commit the repository lacks: only a shallow clone can get it
    by deepening; in a full clone the patch was made on another repository's history."""
    if git.is_shallow(repo):
        return "this is a shallow clone: fetch the history (git fetch --unshallow) to check them"
    return ("the clone is complete, so the patch was made on another repository's history: "
            "verify it in a clone of that repository, or fetch the commit from it "
            f"(git fetch URL {base})")


def verify_patch(repo: Path, patch_rel: str, *, hardwares: str = "hardwares",
                 allow_missing_base: bool = False) -> list[Finding]:
    """Full check: layout, applies at base, round trip, canonical bytes."""
    data, findings = read_checked(repo, patch_rel, hardwares)
    base = patchfile.base_commit(data) if data is not None else None
    if data is None or base is None:
        return findings
    if not git.has_object(repo, f"{base}^{{commit}}"):
        severity = WARNING if allow_missing_base else ERROR
        return findings + [Finding(
            patch_rel, 0, severity, "base-unavailable",
            f"base commit {base[:12]} is not in this repository, so applying and the byte "
            f"round trip were not checked; {missing_base_advice(repo, base[:12])}")]
    return findings + _apply_and_compare(repo, patch_rel, data, base, hardwares)


def _apply_and_compare(repo: Path, rel: str, data: bytes, base: str,
                       hardwares: str) -> list[Finding]:
    mails = patchfile.split_mails(data)
    with Scratch(repo) as gd:
        try:
            applied = roundtrip.apply_series(gd, base, mails)
        except roundtrip.ApplyFailed as exc:
            return [Finding(rel, exc.line, ERROR, "patch-apply",
                            f"{exc} (at base {base[:12]}); regenerate the patch from the vendor "
                            "branch with flagbot patch")]
        except git.GitError as exc:  # e.g. mailinfo rejects a mangled mail
            return [Finding(rel, 0, ERROR, "patch-corrupt",
                            f"git could not read it as mails: {exc}; regenerate it")]
        regen = generate.format_patch(gd, base, applied[-1].commit, hardwares)
        edited = roundtrip.post_image_mismatches(gd, applied, base)
    old, new = patchfile.mask_from_lines(data), patchfile.mask_from_lines(regen)
    line = patchfile.first_difference(old, new)
    if line is None:
        return []
    if edited:  # the diff no longer produces the blobs its own index lines name
        return [Finding(rel, line, ERROR, "patch-bytes",
                        f"hand-edited? {'; '.join(edited)}: the patch was changed after git wrote "
                        "it; regenerate it from the vendor branch with flagbot patch (flagbot "
                        "migrate rewrites it and keeps the old file for review)")]
    rule = "patch-roundtrip" if _messages_changed(mails, regen) else "patch-bytes"
    what = ("a commit message or author does not survive the mail round trip"
            if rule == "patch-roundtrip" else "the bytes are not canonical")
    return [Finding(rel, line, ERROR, rule,
                    f"{what}: line {line} {patchfile.line_at(old, line)!r} regenerates as "
                    f"{patchfile.line_at(new, line)!r}; regenerate with flagbot patch, or run "
                    "flagbot migrate to rewrite it in canonical form")]


def _messages_changed(mails: list[patchfile.Mail], regen: bytes) -> bool:
    """Whether the series lost or changed a mail's headers or message (not just diff bytes)."""
    try:
        again = patchfile.split_mails(regen)
    except patchfile.PatchFileError:
        return True
    if len(again) != len(mails):
        return True
    return any(_head(a.data) != _head(b.data) for a, b in zip(mails, again, strict=True))


def _head(mail: bytes) -> bytes:
    """A mail's headers and message, up to the `---` line before the diffstat."""
    return patchfile.mask_from_lines(mail.split(b"\n---\n", 1)[0])
