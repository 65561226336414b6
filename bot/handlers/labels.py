"""PR labels: the PrivateUse1 label by path globs, `vendor: <DEV>` labels by vendor folders.

Which labels the bot added is kept in the sticky summary comment's hidden metadata (not on this
host), so any worker can tell them from labels people added; only bot-added labels are removed.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from flagbot.bot.github import ChangedFile, Label
from flagbot.bot.github.labels import LabelChange
from flagbot.bot.github.markdown import code
from flagbot.bot.handlers.globs import compile_globs, matching_glob
from flagbot.hooks.config import RepoConfig, label_name
from flagbot.hooks.findings import WARNING, Finding
from flagbot.hooks.patches.devices import DEVICE_RE, label_spelling

log = logging.getLogger(__name__)

# GitHub refuses a label name longer than this (422).
MAX_LABEL_NAME = 50
# `vendor: <DEV>` labels one pull request may get (Settings.max_vendor_labels): labels are
# permanent repository state, so a PR adding dozens of folders must not create dozens.
MAX_VENDOR_LABELS = 10
BACKEND_FOLDER_RE = re.compile(r"_[a-z][a-z0-9_]*")
# Not a vendor: `_template` is the folder vendors copy to start their own backend folder.
TEMPLATE_BACKEND = "_template"
EXAMPLES_SHOWN = 3


@dataclass(frozen=True)
class WantedLabel:
    """A label the PR should carry, why, and the files that made it so."""

    label: Label
    reason: str
    files: tuple[str, ...]
    # `labels.<kind>.when`: "open" (while the PR is open) or "merged" (at merge, and only
    # when the PR's flagbot check runs passed)
    when: str = "open"


def vendor_of(path: str, config: RepoConfig) -> tuple[str, str] | None:
    """(device, folder) when `path` lies in hardwares/<DEV>/ or <backends>/_<vendor>/."""
    for root, is_backend in ((config.hardwares, False), (config.backends, True)):
        prefix = root.rstrip("/") + "/"
        if not path.startswith(prefix):
            continue
        parts = path[len(prefix):].split("/")
        if len(parts) < 2 or not parts[0]:
            continue  # hardwares/hetero.txt, backends/README.md: files at the root, no vendor
        if not is_backend:
            return parts[0], prefix + parts[0]
        if parts[0].startswith("_") and parts[0] != TEMPLATE_BACKEND and len(parts[0]) > 1:
            return parts[0][1:], prefix + parts[0]
    return None


def touched_paths(files: Iterable[ChangedFile]) -> list[str]:
    """Every path the PR touches, old names of renames included (moving out of a folder touches it)."""
    paths: list[str] = []
    for f in files:
        paths.append(f.filename)
        if f.previous:
            paths.append(f.previous)
    return paths


# Why a new vendor's first PR by an author without write permission gets no label: the same
# words in the check run, the summary comment and docs/vendors.md.
NEW_VENDOR = ("a new vendor: not configured under `devices:` in .github/flagbot.yml, no folder "
              "on the default branch yet, and the author has no write permission; a maintainer "
              "can add the label by hand (flagbot keeps it)")


def unusable(device: str, folder: str, name: str, known: Collection[str] | None) -> str | None:
    """Why the folder's device cannot be a `vendor:` label (None: it can). `known`: the
    configured and stored devices (None: any well-formed one)."""
    is_backend = folder.rsplit("/", 1)[-1].startswith("_")
    if is_backend and not BACKEND_FOLDER_RE.fullmatch(folder.rsplit("/", 1)[-1]):
        return "not a vendor folder name like `_acme` (lower case, digits, `_`)"
    if not is_backend and not DEVICE_RE.fullmatch(device):
        return "not a device name like A_X100"
    if len(name) > MAX_LABEL_NAME:
        return f"its label would be {len(name)} characters, over GitHub's {MAX_LABEL_NAME}"
    if known is not None and device.lower() not in {k.lower() for k in known}:
        return NEW_VENDOR
    return None


def plan_labels(config: RepoConfig, paths: Sequence[str], *,
                known: Collection[str] | None = None, max_vendor: int = MAX_VENDOR_LABELS,
                skipped: list[Finding] | None = None) -> dict[str, WantedLabel]:
    """The labels the PR should carry, keyed by name, each with its reason and files.

    A vendor folder becomes a `vendor:` label only when its name is well-formed, its label
    fits GitHub's limit, it is `known` (when given), and fewer than `max_vendor` came before;
    each folder refused is appended to `skipped` as a warning on the folder.
    """
    pu1 = config["labels"]["privateuse1"]
    vendor = config["labels"]["vendor"]
    globs = compile_globs(tuple(pu1["paths"]))
    pu1_files: list[str] = []
    pu1_globs: list[str] = []
    devices: dict[str, tuple[str, list[str]]] = {}
    # one device, one label: `_a_x100/` and `hardwares/A_X100/` are both `vendor: A_X100`
    found_all = [vendor_of(path, config) for path in paths]
    spellings = {*(known or ()), *(str(d) for d in config["devices"]),
                 *(f[0] for f in found_all if f is not None)}
    for path, found in zip(paths, found_all, strict=True):
        glob = matching_glob(path, globs)
        if glob is not None:
            pu1_files.append(path)
            if glob not in pu1_globs:
                pu1_globs.append(glob)
        if found is not None:
            device = label_spelling(found[0], spellings)
            devices.setdefault(device, (found[1], []))[1].append(path)
    wanted: dict[str, WantedLabel] = {}
    if pu1_files:
        label = Label(pu1["name"], pu1.get("color", "5319e7"), pu1.get("description", ""))
        reason = "matches " + ", ".join(code(g) for g in pu1_globs)
        wanted[label.name] = WantedLabel(label, reason, tuple(pu1_files), when_of(pu1))
    given = 0
    for device, (folder, files) in sorted(devices.items()):
        name = label_name(str(vendor["pattern"]), device)
        why = unusable(device, folder, name, known)
        if why is None and given >= max_vendor:
            why = f"this pull request has {max_vendor} vendor labels already (the most it gets)"
        if why is not None:
            if skipped is not None:
                skipped.append(Finding(folder, 0, WARNING, "vendor-label",
                                       f"no `vendor:` label for this folder: {why}"))
            continue
        given += 1
        description = label_name(str(vendor.get("description", "")), device)[:100]
        label = Label(name, vendor.get("color", "0e8a16"), description)
        wanted[name] = WantedLabel(label, f"touches {code(folder + '/')}", tuple(files),
                                   when_of(vendor))
    return wanted


def when_of(spec: dict[str, Any]) -> str:
    """`when:` of a label's configuration: "merged", else "open"."""
    return "merged" if spec.get("when") == "merged" else "open"


def split_by_when(wanted: dict[str, WantedLabel]) -> tuple[dict[str, WantedLabel], dict[str, WantedLabel]]:
    """(labels for now, labels for the merge)."""
    now = {n: w for n, w in wanted.items() if w.when != "merged"}
    return now, {n: w for n, w in wanted.items() if w.when == "merged"}


def describe_at_merge(later: dict[str, WantedLabel]) -> list[str]:
    """Summary lines for labels the configuration applies at merge."""
    return [f"- **{code(name)}** at merge, if flagbot's checks pass (`when: merged`): {w.reason}"
            for name, w in later.items()]


def describe_skipped(skipped: Sequence[Finding]) -> list[str]:
    """Summary lines for vendor folders that got no label, in the check run's words."""
    return [f"- no label for {code(f.path + '/')}: {f.message.split(': ', 1)[-1]}"
            for f in skipped if f.rule == "vendor-label"]


def plan_change(wanted: dict[str, WantedLabel], current: Iterable[str],
                previous_bot: Iterable[str], repo_labels: dict[str, Label] | None) -> LabelChange:
    """Diff wanted labels against the PR's: add missing, remove stale bot-added, keep the rest."""
    have = {name.lower(): name for name in current}
    want = {name.lower() for name in wanted}
    prev = {name.lower(): name for name in previous_bot}
    to_add = tuple(name for name in wanted if name.lower() not in have)
    # Only labels the bot itself added may go; a person's label stays even when it matches ours.
    to_remove = tuple(sorted(have[k] for k in prev if k not in want and k in have))
    keep = [name for name in wanted if name.lower() in prev and name.lower() in have]
    existing = {name.lower() for name in (repo_labels or {})}
    to_create = tuple(wanted[n].label for n in to_add if n.lower() not in existing)
    return LabelChange(to_create, to_add, to_remove, tuple(sorted({*keep, *to_add})))


def describe(wanted: dict[str, WantedLabel]) -> list[str]:
    """Summary lines: each label, why, and a few of its files."""
    lines = []
    for name, w in wanted.items():
        shown = ", ".join(code(p) for p in w.files[:EXAMPLES_SHOWN])
        more = f" and {len(w.files) - EXAMPLES_SHOWN} more" if len(w.files) > EXAMPLES_SHOWN else ""
        lines.append(f"- **{code(name)}**: {w.reason} ({shown}{more})")
    return lines
