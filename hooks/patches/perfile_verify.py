"""Verify FlagScale per-file folders: what can be checked is applied exactly, the rest is named.

Per folder: its `diff.yaml` is validated (perfile.py); plain patches of the FlagScale backend
are applied at the folder's `commit` in a scratch index (scratch.py: nothing touches the
checkout), exactly as git writes them (no whitespace fixing, no fuzz). Patches of a submodule
backend are applied the same way at `backends_commit` in that backend's source when one is at
hand (an initialised `third_party/<backend>`, or `--backend-source NAME=PATH`), else they get
one warning saying why they were not checked. Encrypted files are decrypted in memory with
`--key-path` and checked like plain ones, else listed in one warning per folder.

Speed: a folder's patches touch distinct files, so they are checked by one `git apply
--cached --check` over all of them at once (one git process per folder instead of one per
file); only when that fails are the failing files found, by halving the batch, so every
failure names its own file and git's reason. benchmarks/bench_perfile_verify.py measures it on
a FlagScale checkout.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from flagbot.hooks import git
from flagbot.hooks.findings import ERROR, WARNING, Finding
from flagbot.hooks.limits import MAX_PATCH_BYTES, read_limited
from flagbot.hooks.patches import patchfile
from flagbot.hooks.patches.perfile import (
    FLAGSCALE,
    WHOLE_NAMES,
    Folder,
    Meta,
    layout_findings,
    read_meta,
)
from flagbot.hooks.patches.scratch import GitDir, Scratch

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey

SUBMODULES = "third_party"
_FAILED_AT = re.compile(r"patch failed: (.+):(\d+)")
_CORRUPT_AT = re.compile(r"corrupt patch at line (\d+)")
# patch files per `git apply` run: far below the kernel's argument-length limit even with
# long paths, and more than any real folder holds (FlagScale's largest: 753)
BATCH = 1000
# FlagScale's 4096-bit key: IV 16 + wrapped key 512 + whole AES blocks
_ENC_OVERHEAD = 16 + 512


@dataclass(frozen=True)
class Options:
    """What the caller can supply beyond the checkout: a key and backend sources."""

    key_path: Path | None = None
    backend_sources: dict[str, Path] = field(default_factory=dict)
    allow_missing_base: bool = False


@dataclass
class Item:
    """One patch to apply: its repository path, bytes, and a file git can read it from."""

    rel: str
    data: bytes
    disk: Path | None = None  # None: decrypted, written to the scratch dir when applied


@dataclass
class Job:
    """The patches of one folder, applied at `base` in the repository `source`."""

    folder: Folder
    source: Path
    base: str
    where: str
    items: list[Item] = field(default_factory=list)


def verify_folders(repo: Path, folders: list[Folder], opts: Options = Options(), *,
                   apply: bool = True) -> list[Finding]:
    """Every finding for the given per-file folders (layout, diff.yaml, and unless `apply` is
    False, as at commit time, applying)."""
    key = None
    if opts.key_path is not None and any(f.encrypted for f in folders):
        from flagbot.hooks.patches.perfile_crypto import load_private_key

        key = load_private_key(opts.key_path)
    metas: list[tuple[Folder, Meta | None]] = []
    findings: list[Finding] = []
    for folder in folders:
        meta, found = read_meta(repo, folder)
        findings += layout_findings(folder) + found
        metas.append((folder, meta))
    present = present_commits(repo, [m.commit for _, m in metas if m and m.commit]) if apply \
        else set()
    jobs: list[Job] = []
    for folder, meta in metas:
        job, found = plan_folder(repo, folder, meta if apply else None, present, key, opts)
        findings += found
        if job is not None and job.items:
            jobs.append(job)
    return findings + run_jobs(jobs)


def present_commits(repo: Path, ids: list[str]) -> set[str]:
    """Which of the full commit ids are commits in `repo` (one git call)."""
    if not ids:
        return set()
    proc = git.run(["cat-file", "--batch-check=%(objectname) %(objecttype)"], cwd=repo,
                   stdin="".join(f"{i}^{{commit}}\n" for i in ids).encode())
    return {line.split()[0] for line in proc.stdout.decode().splitlines()
            if line.endswith(" commit")}


def plan_folder(repo: Path, folder: Folder, meta: Meta | None, present: set[str],
                key: RSAPrivateKey | None, opts: Options) -> tuple[Job | None, list[Finding]]:
    """The apply job for one folder and the findings made on the way (names, bytes, keys)."""
    findings: list[Finding] = []
    items = [item for rel in folder.plain if (item := read_item(repo, folder, rel, findings))]
    if folder.encrypted:
        items += encrypted_items(repo, folder, key, findings)
    if meta is None or meta.commit is None or not items:
        return None, findings
    if meta.commit not in present:
        severity = WARNING if opts.allow_missing_base else ERROR
        findings.append(Finding(folder.meta_rel, 0, severity, "perfile-base",
                                f"commit {meta.commit[:12]} is not a commit in this repository "
                                "(a shallow clone, or a mistyped id?), so its patches were not "
                                "applied; fetch the history (git fetch --unshallow) or fix it"))
        return None, findings
    if folder.backend == FLAGSCALE:
        return Job(folder, repo, meta.commit, f"FlagScale commit {meta.commit[:12]}", items), findings
    job, why = submodule_job(repo, folder, meta, opts)
    if job is None:
        findings.append(Finding(folder.meta_rel, 0, WARNING, "perfile-unverified",
                                f"{len(items)} patch file(s) of the {folder.backend} submodule "
                                f"were not applied: {why}"))
        return None, findings
    job.items = items
    return job, findings


def read_item(repo: Path, folder: Folder, rel: str, findings: list[Finding]) -> Item | None:
    """A plain patch's bytes, after the checks that need no git (sections, name)."""
    try:
        data = read_limited(repo / rel, MAX_PATCH_BYTES)
    except OSError as exc:
        findings.append(Finding(rel, 0, ERROR, "perfile-corrupt", f"cannot read: {exc}"))
        return None
    return Item(rel, data, repo / rel) if section_findings(folder, rel, data, findings) else None


def section_findings(folder: Folder, rel: str, data: bytes, findings: list[Finding]) -> bool:
    """Check the `diff --git` sections against the name; False when there is nothing to apply."""
    heads = [line for line in data.split(b"\n") if line.startswith(b"diff --git ")]
    if not heads:
        findings.append(Finding(rel, 1, ERROR, "perfile-corrupt",
                                "no 'diff --git' section: not a git diff; regenerate it"))
        return False
    whole = rel.rsplit("/", 1)[-1] in WHOLE_NAMES and rel.count("/") == folder.rel.count("/") + 1
    target = folder.target(rel)
    paths = patchfile.header_paths(heads[0])
    if len(heads) == 1 and paths and paths[-1] != target and not whole:
        findings.append(Finding(rel, 1, WARNING, "perfile-name",
                                f"changes {paths[-1]!r} but is named after {target!r}; "
                                "FlagScale names each file after the path it changes"))
    elif len(heads) > 1 and not whole:
        findings.append(Finding(rel, 1, WARNING, "perfile-name",
                                f"holds {len(heads)} file sections; FlagScale's tool writes one "
                                "per file"))
    return True


def encrypted_items(repo: Path, folder: Folder, key: RSAPrivateKey | None,
                    findings: list[Finding]) -> list[Item]:
    """Decrypted items with a key; without one, one warning listing the folder's files."""
    if key is None:
        odd = [rel for rel in folder.encrypted
               if ((repo / rel).stat().st_size - _ENC_OVERHEAD) % 16
               or (repo / rel).stat().st_size < _ENC_OVERHEAD + 16]
        findings.append(Finding(folder.meta_rel, 0, WARNING, "perfile-encrypted",
                                f"{len(folder.encrypted)} encrypted patch file(s) present but not "
                                "verified: no key; pass --key-path DIR (the folder holding the "
                                "vendor's private_key.pem) to check them"))
        findings += [Finding(rel, 0, WARNING, "perfile-encrypted",
                             "its size is not IV + 4096-bit wrapped key + whole AES blocks: "
                             "cut, or encrypted another way") for rel in odd]
        return []
    from flagbot.hooks.patches.perfile_crypto import DecryptError, decrypt

    items = []
    for rel in folder.encrypted:
        try:
            data = decrypt(read_limited(repo / rel, MAX_PATCH_BYTES), key)
        except (OSError, DecryptError) as exc:
            findings.append(Finding(rel, 0, ERROR, "perfile-encrypted",
                                    f"cannot decrypt with the given key: {exc}"))
            continue
        if section_findings(folder, rel, data, findings):
            items.append(Item(rel, data))
    return items


def backend_source(repo: Path, backend: str, opts: Options) -> Path | None:
    """The backend's source repository: `--backend-source`, else an initialised submodule."""
    given = opts.backend_sources.get(backend)
    if given is not None:
        return given
    sub = repo / SUBMODULES / backend
    return sub if (sub / ".git").exists() else None


def submodule_job(repo: Path, folder: Folder, meta: Meta,
                  opts: Options) -> tuple[Job | None, str]:
    """The job applying a submodule folder at its base, or None and why it cannot run here."""
    backend = folder.backend
    base = meta.backends_commit.get(backend)
    if base is None:  # FlagScale's unpatch then stays at the gitlink of `commit`
        proc = git.run(["rev-parse", "--verify", "--quiet", f"{meta.commit}:{SUBMODULES}/{backend}"],
                       cwd=repo, check=False)
        base = proc.stdout.decode().strip() if proc.returncode == 0 else None
        if base is None:
            return None, (f"diff.yaml has no backends_commit.{backend} and commit "
                          f"{str(meta.commit)[:12]} records no {SUBMODULES}/{backend}")
    source = backend_source(repo, backend, opts)
    if source is None:
        return None, (f"their base {backend}@{base[:12]} needs the {backend} source; run "
                      f"`git submodule update --init {SUBMODULES}/{backend}` or pass "
                      f"--backend-source {backend}=PATH")
    if not git.has_object(source, f"{base}^{{commit}}"):
        return None, (f"{backend}@{base[:12]} is not a commit in {source}; fetch it there "
                      "(git fetch origin " + base + ")")
    return Job(folder, source, base, f"{backend} commit {base[:12]} ({source})"), ""


def run_jobs(jobs: list[Job]) -> list[Finding]:
    """Apply every job's patches in scratch indexes; one scratch dir per source repository."""
    findings: list[Finding] = []
    by_source: dict[Path, list[Job]] = {}
    for job in jobs:
        by_source.setdefault(job.source, []).append(job)
    for source, group in by_source.items():
        with Scratch(source) as gd:
            for job in group:
                findings += check_job(gd, job)
    return findings


def check_job(gd: GitDir, job: Job) -> list[Finding]:
    """All of a job's patches at once; on failure the failing ones are found by halving, so
    each error names its own file and git's reason for it."""
    pairs = [(item, stage(gd, n, item)) for n, item in enumerate(job.items)]
    gd.run(["read-tree", job.base])
    failed: list[tuple[Item, bytes]] = []
    clash = False
    for start in range(0, len(pairs), BATCH):  # a command line has a length limit
        some, odd = failing(gd, pairs[start:start + BATCH])
        failed += some
        clash = clash or odd
    out = [apply_finding(job, item, err) for item, err in failed]
    if clash:  # not seen with git 2.39 (--check weighs each input alone); never hidden
        out.append(Finding(job.folder.meta_rel, 0, ERROR, "perfile-apply",
                           f"git rejects its patches together at {job.where} but accepts each "
                           "half; check them with git apply --cached --check"))
    return out + same_path_findings(job.items)


def same_path_findings(items: list[Item]) -> list[Finding]:
    """Two patches of one folder changing one path: applied one after the other (as FlagScale's
    unpatch does), the second fails; `git apply --check` weighs each alone and cannot tell."""
    seen: dict[str, str] = {}
    out = []
    for item in items:
        for line in item.data.split(b"\n"):
            if not line.startswith(b"diff --git "):
                continue
            path = (patchfile.header_paths(line) or [""])[-1]
            if path in seen and seen[path] != item.rel:
                out.append(Finding(item.rel, 1, ERROR, "perfile-apply",
                                   f"changes {path}, which {seen[path]} changes too; applied one "
                                   "after the other the second fails: keep one"))
            seen.setdefault(path, item.rel)
    return out


def failing(gd: GitDir, pairs: list[tuple[Item, Path]]) -> tuple[list[tuple[Item, bytes]], bool]:
    """(patches that do not apply with git's message, whether some only clash together).

    git stops at the first patch that fails, so one run cannot name them all; halving finds
    k failures among n patches in about 2k*log2(n) runs instead of n.
    """
    proc = gd.run(["apply", "--cached", "--check", "--", *(str(p) for _, p in pairs)],
                  check=False)
    if proc.returncode == 0:
        return [], False
    if len(pairs) == 1:
        return [(pairs[0][0], proc.stderr)], False
    mid = len(pairs) // 2
    left, left_clash = failing(gd, pairs[:mid])
    right, right_clash = failing(gd, pairs[mid:])
    return left + right, left_clash or right_clash or not (left or right)


def stage(gd: GitDir, n: int, item: Item) -> Path:
    """A file git can read the patch from (decrypted ones go to the scratch dir)."""
    if item.disk is not None:
        return item.disk
    path = gd.tmp / f"decrypted-{n}.patch"
    path.write_bytes(item.data)
    return path


def apply_finding(job: Job, item: Item, stderr: bytes) -> Finding:
    """The error for a patch git would not apply: its line, git's reason, the next step."""
    err = stderr.decode("utf-8", "replace")
    line = 1
    if hit := _FAILED_AT.search(err):
        line = patchfile.locate_hunk(item.data, hit.group(1), int(hit.group(2))) + 1
    elif hit := _CORRUPT_AT.search(err):
        line = int(hit.group(1))
    reason = "; ".join(ln.removeprefix("error: ") for ln in err.splitlines() if ln.strip())[:400]
    return Finding(item.rel, line, ERROR, "perfile-apply",
                   f"does not apply at {job.where}: {reason or 'git apply failed'}; regenerate it "
                   "against that commit (or correct `commit` in diff.yaml)")


__all__ = ["Item", "Job", "Options", "present_commits", "verify_folders"]
