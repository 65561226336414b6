"""Drift: do the stored patches still apply onto a newer commit of the default branch?

A vendor patch was verified at its base when it was merged; the branch moves on, and nobody
learns that building it onto a newer base conflicts until a user tries. `check_drift` reads every
`<hardwares>/<DEV>/<base8>/<base8>.patch` and `hetero.txt` from one commit (the branch head) and
applies each patch onto that commit, mail by mail, in a scratch git dir (nothing is written to
the repository). For a patch that stops applying it names the files and hunks that conflict, and
the first commit of the branch (first parents after the base) onto which it no longer applies,
found by bisection. `hetero.txt` entries are checked as a set: an entry holds only when the
patches of all its devices apply.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from flagbot.hooks import git
from flagbot.hooks.limits import MAX_PATCH_BYTES
from flagbot.hooks.patches import hetero, patchfile, perfile_drift, roundtrip, verify
from flagbot.hooks.patches.patchfile import Mail
from flagbot.hooks.patches.scratch import GitDir, Scratch

_DIFF = re.compile(rb"^diff --git ", re.M)
_HUNK = re.compile(rb"^@@ [^\n]*", re.M)
MAX_BISECT_COMMITS = 100_000  # first-parent commits read when looking for "since"


@dataclass(frozen=True)
class Conflict:
    """One file of the failing mail that does not apply, and its hunks that do not."""

    path: str
    hunks: tuple[str, ...]  # `@@ -a,b +c,d @@` headers; empty when the file itself is the problem
    reason: str  # git apply's first complaint about the file


@dataclass(frozen=True)
class PatchDrift:
    """A stored patch that does not apply onto the checked commit."""

    device: str
    base8: str
    patch_rel: str
    mail: int  # the first mail (1-based) that fails; later ones were not tried
    mails: int
    subject: str
    conflicts: tuple[Conflict, ...]
    since: str | None  # first branch commit it fails on (None: the base is not an ancestor)


@dataclass(frozen=True)
class HeteroSet:
    """A hetero.txt entry whose set cannot be built: the members that drifted or lack a patch."""

    base8: str
    devices: tuple[str, ...]
    drifted: tuple[str, ...]
    missing: tuple[str, ...]


@dataclass
class DriftReport:
    """What one check found at `head`."""

    head: str
    checked: list[str] = field(default_factory=list)  # patch paths applied
    drifted: list[PatchDrift] = field(default_factory=list)
    hetero: list[HeteroSet] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # `path: why` for patches not checked

    def devices(self) -> list[str]:
        """Every device with a stored patch or a hetero.txt entry, sorted."""
        found = {rel.split("/")[-3] for rel in self.checked}
        found |= {d.device for d in self.drifted}
        found |= {dev for s in self.hetero for dev in s.devices}
        return sorted(found)

    def drifted_devices(self) -> list[str]:
        """Devices with a patch that no longer applies, sorted."""
        return sorted({d.device for d in self.drifted})


def stored_patches(repo: Path, commit: str, hardwares: str) -> list[str]:
    """The `<hardwares>/<DEV>/<base8>/<base8>.patch` paths in `commit`'s tree, sorted."""
    out = git.run(["ls-tree", "-r", "-z", "--name-only", commit, "--", hardwares.rstrip("/") + "/"],
                  cwd=repo).stdout
    names = [n.decode("utf-8", "surrogateescape") for n in out.split(b"\0") if n]
    return sorted(n for n in names if verify.is_patch_path(n))


def read_blob(repo: Path, commit: str, rel: str, limit: int = MAX_PATCH_BYTES) -> bytes | None:
    """The bytes of `rel` in `commit` (None when absent); ValueError over `limit` bytes."""
    spec = f"{commit}:{rel}"
    size = git.run(["cat-file", "-s", spec], cwd=repo, check=False)
    if size.returncode != 0:
        return None
    if int(size.stdout.strip() or 0) > limit:
        raise ValueError(f"{rel}: over {limit} bytes")
    return git.run(["cat-file", "blob", spec], cwd=repo).stdout


def applies(gd: GitDir, commit: str, mails: list[Mail]) -> bool:
    """Whether the whole series applies onto `commit`."""
    try:
        roundtrip.apply_series(gd, commit, mails)
    except roundtrip.ApplyFailed:
        return False
    return True


def mail_diff(gd: GitDir, mail: Mail) -> bytes:
    """The diff part of one mail, as `git am` would apply it."""
    msg_file, patch_file = gd.tmp / "drift-msg", gd.tmp / "drift-patch"
    gd.run([*roundtrip.MAILINFO, str(msg_file), str(patch_file)], stdin=mail.data)
    return patch_file.read_bytes()


def split_at(data: bytes, pattern: re.Pattern[bytes]) -> tuple[bytes, list[bytes]]:
    """(what comes before the first match, each part from one match to the next)."""
    starts = [m.start() for m in pattern.finditer(data)]
    if not starts:
        return data, []
    parts = [data[s:e] for s, e in zip(starts, [*starts[1:], len(data)], strict=True)]
    return data[: starts[0]], parts


def check_apply(gd: GitDir, diff: bytes) -> str | None:
    """None when `diff` applies onto the index, else git apply's first complaint."""
    path = gd.tmp / "drift-check"
    path.write_bytes(diff)
    proc = gd.run(["apply", "--cached", "--check", str(path)], check=False)
    if proc.returncode == 0:
        return None
    lines = [ln for ln in proc.stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    return lines[0].removeprefix("error: ") if lines else "git apply failed"


def file_path(section: bytes) -> str:
    """The path a `diff --git` section changes (the post-image name, or the deleted one)."""
    paths = patchfile.header_paths(section.split(b"\n", 1)[0])
    return paths[-1] if paths else "?"


def conflicts_of(gd: GitDir, diff: bytes) -> tuple[Conflict, ...]:
    """Every file section of `diff` that does not apply onto the index, with its failing hunks
    (each hunk tried alone: git apply stops at a file's first bad hunk)."""
    found = []
    for section in split_at(diff, _DIFF)[1]:
        reason = check_apply(gd, section)
        if reason is None:
            continue
        head, hunks = split_at(section, _HUNK)
        bad = tuple(m.group(0).decode("utf-8", "replace")
                    for hunk in hunks if check_apply(gd, head + hunk) is not None
                    if (m := _HUNK.match(hunk)))
        found.append(Conflict(file_path(section), bad, reason))
    return tuple(found)


def first_failing(gd: GitDir, repo: Path, base: str | None, head: str,
                  mails: list[Mail]) -> str | None:
    """The first first-parent commit after `base` up to `head` onto which the series fails
    (bisection: a patch that stops applying is taken to stay broken); None when `base` is not
    an ancestor of `head` or unknown."""
    if not base:
        return None
    proc = git.run(["rev-list", "--first-parent", "--reverse", f"--max-count={MAX_BISECT_COMMITS}",
                    f"{base}..{head}"], cwd=repo, check=False)
    commits = proc.stdout.decode().split() if proc.returncode == 0 else []
    if not commits or commits[-1] != head:
        return None
    lo, hi = 0, len(commits) - 1  # commits[hi] fails
    while lo < hi:
        mid = (lo + hi) // 2
        if applies(gd, commits[mid], mails):
            lo = mid + 1
        else:
            hi = mid
    return commits[hi]


def check_patch(gd: GitDir, repo: Path, head: str, rel: str, data: bytes) -> PatchDrift | None:
    """None when the patch at `rel` applies onto `head`, else how it drifted."""
    mails = patchfile.split_mails(data)
    try:
        roundtrip.apply_series(gd, head, mails)
        return None
    except roundtrip.ApplyFailed as exc:
        failed = exc.number
    # the index as the failing mail found it: the earlier mails applied onto head
    roundtrip.apply_series(gd, head, mails[: failed - 1])
    conflicts = conflicts_of(gd, mail_diff(gd, mails[failed - 1]))
    since = first_failing(gd, repo, patchfile.base_commit(data), head, mails)
    device, base8 = rel.split("/")[-3], rel.split("/")[-2]
    return PatchDrift(device, base8, rel, failed, len(mails), mails[failed - 1].subject,
                      conflicts, since)


def check_drift(repo: Path, head: str, hardwares: str = "hardwares") -> DriftReport:
    """Apply every stored patch of `head`'s tree onto `head`; see the module docstring."""
    report = DriftReport(head)
    rels, perfile_counts = perfile_drift.split_perfile(repo, head, hardwares,
                                                      stored_patches(repo, head, hardwares))
    report.skipped += perfile_drift.skipped_lines(perfile_counts)
    with Scratch(repo) as gd:
        for rel in rels:
            problem = verify.layout_problem(rel.removesuffix(".encrypted"), hardwares)
            if problem:
                report.skipped.append(f"{rel}: {problem}")
                continue
            if rel.endswith(verify.ENCRYPTED):
                report.skipped.append(f"{rel}: stored encrypted (no key to read it)")
                continue
            try:
                data = read_blob(repo, head, rel) or b""
                drift = check_patch(gd, repo, head, rel, data)
            except (ValueError, patchfile.PatchFileError) as exc:
                report.skipped.append(f"{rel}: not a readable patch series ({exc})")
                continue
            report.checked.append(rel)
            if drift is not None:
                report.drifted.append(drift)
    report.hetero = hetero_sets(repo, head, hardwares, report)
    return report


def hetero_sets(repo: Path, head: str, hardwares: str, report: DriftReport) -> list[HeteroSet]:
    """hetero.txt entries at `head` that cannot be built as a set."""
    rel = f"{hardwares.rstrip('/')}/{hetero.HETERO_NAME}"
    text = read_blob(repo, head, rel, limit=1024 * 1024)
    if text is None:
        return []
    doc, errors = hetero.parse_lines(text.decode("utf-8", "replace"))
    for err in errors:
        report.skipped.append(f"{rel}: {err}")
    have = {(p.split("/")[-3], p.split("/")[-2]) for p in report.checked}
    drifted = {(d.device, d.base8) for d in report.drifted}
    broken = []
    for base8 in sorted({e.base for e in doc.entries}):
        devices = tuple(doc.devices_for(base8))
        bad = tuple(d for d in devices if (d, base8) in drifted)
        missing = tuple(d for d in devices if (d, base8) not in have)
        if bad or missing:
            broken.append(HeteroSet(base8, devices, bad, missing))
    return broken
