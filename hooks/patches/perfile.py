"""FlagScale's per-file patch layout: finding its folders and reading their `diff.yaml`.

Since September 2025 FlagScale stores a vendor's changes per backend, not per base:
`<hardware>/<Vendor_Model>/<backend>/diff.yaml` beside one `git diff` section per changed file,
named after the file (`<path inside the backend>.patch`, or `.patch.encrypted`), or, in older
folders, one whole-backend `diff.patch`. A `diff.yaml` two levels below the patch folder is what
marks the layout, so it is recognised without any configuration. `<backend>` is `FlagScale`
(the repository itself) or a submodule under `third_party/<backend>`.

Values in, findings out; the git work (applying) is `perfile_verify.py`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flagbot.hooks.findings import ERROR, WARNING, Finding
from flagbot.hooks.limits import read_limited
from flagbot.kernels.yamlload import safe_load_bounded

DIFF_YAML = "diff.yaml"
HISTORY = "patch_history.yaml"
WHOLE_NAMES = ("diff.patch", "diff.patch.encrypted")
ENCRYPTED = ".patch.encrypted"
PLAIN = ".patch"
FLAGSCALE = "FlagScale"
# FlagScale's tools accept these backends (the names their normaliser produces).
BACKENDS = frozenset({"FlagScale", "Megatron-LM", "Megatron-Energon", "vllm", "sglang",
                      "llama.cpp", "omniinfer", "verl"})
TASKS = ("train", "inference", "post_train")
# FlagScale's rule for device folders: one underscore, upper-case first letter.
VENDOR_RE = re.compile(r"[A-Z][A-Za-z0-9.-]*_[A-Za-z0-9.-]+")
FULL_ID = re.compile(r"[0-9a-f]{40}")
MAX_YAML_BYTES = 256 * 1024  # the largest real diff.yaml is a few hundred bytes


@dataclass(frozen=True)
class Folder:
    """One backend folder: `rel` = `<hardware>/<device>/<backend>`, its patch files by kind."""

    rel: str
    device: str
    backend: str
    plain: tuple[str, ...] = ()
    encrypted: tuple[str, ...] = ()

    @property
    def meta_rel(self) -> str:
        return f"{self.rel}/{DIFF_YAML}"

    def target(self, patch_rel: str) -> str:
        """The path inside the backend a per-file patch is named after."""
        inner = patch_rel[len(self.rel) + 1:]
        return inner[:-len(ENCRYPTED)] if inner.endswith(ENCRYPTED) else inner[:-len(PLAIN)]


@dataclass
class Meta:
    """The fields of a `diff.yaml` the checks use; `None` where missing or malformed."""

    commit: str | None = None
    backends_commit: dict[str, str] = field(default_factory=dict)
    tasks: list[str] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)


def folder_rel(patch_rel: str, hardwares: str) -> str | None:
    """`<hardwares>/<a>/<b>` when `patch_rel` lies inside such a folder (deeper than it), else None."""
    prefix = hardwares.strip("/") + "/"
    if not patch_rel.startswith(prefix):
        return None
    parts = patch_rel[len(prefix):].split("/")
    return prefix + "/".join(parts[:2]) if len(parts) >= 3 else None


def in_perfile_folder(repo: Path, patch_rel: str, hardwares: str) -> bool:
    """Whether `patch_rel` belongs to a per-file folder (one with a `diff.yaml`)."""
    rel = folder_rel(patch_rel, hardwares)
    return rel is not None and (repo / rel / DIFF_YAML).is_file()


def find_folders(repo: Path, hardwares: str) -> list[Folder]:
    """Every `<hardwares>/<device>/<backend>/` holding a `diff.yaml`, with its patch files."""
    root = repo / hardwares.strip("/")
    if not root.is_dir():
        return []
    return [scan_folder(repo, meta.parent.relative_to(repo).as_posix())
            for meta in sorted(root.glob(f"*/*/{DIFF_YAML}")) if meta.is_file()]


def uses_perfile(repo: Path, hardwares: str) -> bool:
    """Whether the repository keeps vendor patches in FlagScale's per-file layout."""
    root = repo / hardwares.strip("/")
    return root.is_dir() and any(p.is_file() for p in root.glob(f"*/*/{DIFF_YAML}"))


def scan_folder(repo: Path, rel: str) -> Folder:
    """The folder's plain and encrypted patch files, repository-relative and sorted."""
    plain: list[str] = []
    encrypted: list[str] = []
    for top, _dirs, files in os.walk(repo / rel):
        here = Path(top).relative_to(repo).as_posix()
        for name in files:
            if name.endswith(ENCRYPTED):
                encrypted.append(f"{here}/{name}")
            elif name.endswith(PLAIN):
                plain.append(f"{here}/{name}")
    _hw, device, backend = rel.rsplit("/", 2)
    return Folder(rel, device, backend, tuple(sorted(plain)), tuple(sorted(encrypted)))


def folders_for(repo: Path, hardwares: str, paths: list[str]) -> list[Folder]:
    """The per-file folders the repository-relative `paths` lie in (a diff.yaml or a patch)."""
    rels = {r for p in paths if (r := folder_rel(p, hardwares)) is not None
            and (repo / r / DIFF_YAML).is_file()}
    return [scan_folder(repo, r) for r in sorted(rels)]


def read_meta(repo: Path, folder: Folder) -> tuple[Meta | None, list[Finding]]:
    """The folder's `diff.yaml` and what is wrong with it (errors and warnings, no git)."""
    import yaml

    rel = folder.meta_rel
    try:
        doc = safe_load_bounded(read_limited(repo / rel, MAX_YAML_BYTES).decode("utf-8"))
    except (OSError, yaml.YAMLError, UnicodeDecodeError) as exc:
        return None, [Finding(rel, 0, ERROR, "perfile-meta", f"cannot read it as YAML: {exc}")]
    if not isinstance(doc, dict):
        return None, [Finding(rel, 0, ERROR, "perfile-meta",
                              "not a mapping of fields (commit, backends_commit, task, ...)")]
    return parse_meta(rel, folder, doc)


def parse_meta(rel: str, folder: Folder, doc: dict[str, Any]) -> tuple[Meta, list[Finding]]:
    """Validate a parsed `diff.yaml` against its folder."""
    out: list[Finding] = []

    def bad(message: str, severity: str = ERROR) -> None:
        out.append(Finding(rel, 0, severity, "perfile-meta", message))

    meta = Meta(raw=doc)
    commit = doc.get("commit")
    if commit is None:
        bad("no 'commit' (the FlagScale commit the patches apply to); FlagScale's unpatch "
            "needs it: add `commit: <40-hex id>`")
    elif not (isinstance(commit, str) and FULL_ID.fullmatch(commit)):
        bad(f"commit {str(commit)[:60]!r} is not a full 40-hex commit id; write the whole id "
            "(git rev-parse <commit>)")
    else:
        meta.commit = commit
    backends = doc.get("backends_commit") or {}
    if not isinstance(backends, dict):
        bad("backends_commit must map backend names to commit ids")
        backends = {}
    for name, value in backends.items():
        if isinstance(value, str) and FULL_ID.fullmatch(value):
            meta.backends_commit[str(name)] = value
        else:
            bad(f"backends_commit.{name} {str(value)[:60]!r} is not a full 40-hex commit id")
    device = doc.get("device_type")
    if device is not None and device != folder.device:
        bad(f"device_type {str(device)[:60]!r} does not match its folder {folder.device!r}; "
            "FlagScale's tools use the folder name, so fix one of them")
    tasks = doc.get("task")
    task_list = tasks if isinstance(tasks, list) else [tasks] if tasks is not None else []
    for task in task_list:
        if task not in TASKS:
            bad(f"task {str(task)[:40]!r} is not one of {', '.join(TASKS)}")
    meta.tasks = [str(t) for t in task_list if t in TASKS]
    if folder.backend != FLAGSCALE and folder.backend not in meta.backends_commit:
        bad(f"no backends_commit.{folder.backend}: its patches apply wherever the submodule's "
            "recorded commit is at `commit`; record the base you diffed against", WARNING)
    return meta, out


def layout_findings(folder: Folder) -> list[Finding]:
    """Folder names and forms FlagScale's tools would reject or mis-read."""
    out: list[Finding] = []
    if not VENDOR_RE.fullmatch(folder.device) or folder.device.count("_") != 1:
        out.append(Finding(folder.meta_rel, 0, ERROR, "perfile-layout",
                           f"device folder {folder.device!r} is not a FlagScale device name "
                           "(Vendor_Model: one '_', upper-case first letter)"))
    if folder.backend not in BACKENDS:
        out.append(Finding(folder.meta_rel, 0, WARNING, "perfile-layout",
                           f"backend folder {folder.backend!r} is not one FlagScale's tools know "
                           f"({', '.join(sorted(BACKENDS))})"))
    if not folder.plain and not folder.encrypted:
        out.append(Finding(folder.meta_rel, 0, ERROR, "perfile-layout",
                           "no patch files beside it; FlagScale's unpatch fails on an empty folder"))
    if folder.plain and folder.encrypted:
        out.append(Finding(folder.meta_rel, 0, ERROR, "perfile-layout",
                           f"mixes {len(folder.plain)} plain and {len(folder.encrypted)} "
                           "encrypted patch files; a folder holds one form"))
    return out


def unpatch_hint(repo: Path, hardwares: str, device: str) -> str | None:
    """What to do when `flagbot unpatch` finds only per-file folders for `device`, or None."""
    folders = [f for f in find_folders(repo, hardwares) if f.device == device]
    if not folders:
        return None
    names = ", ".join(f.backend for f in folders)
    own = next((f for f in folders if f.backend == FLAGSCALE), None)
    step = (f"convert the FlagScale folder with `flagbot migrate {own.rel}` (it writes "
            f"{hardwares}/{device}/<base8>/<base8>.patch), then unpatch that base; "
            if own is not None else "")
    return (f"{hardwares}/{device}/ holds FlagScale's per-file folders ({names}), which unpatch "
            f"does not build directly: {step}submodule backends are applied by FlagScale's "
            "tools/patch/unpatch.py")
