"""`/unpatch DEV [DEV ...] BASE`: the vendor tree at BASE, built from the patches stored on the
pull request's head and pushed as `unpatch/<DEV>/<base8>`, one branch per device.

Arguments pass the patch engine's validation before any path or git argument is made from them.
The patches are read from git objects, never from a checkout. Only the asked base's patches
(the exact layout `<hardwares>/<DEV>/<base8>/<base8>.patch`) and `hetero.txt` are written
out, into a scratch folder of the workspace, and only after git's object sizes show them within
the patch size limit: anyone who can comment can ask, so a pull request storing huge patches
costs the bot a size lookup, not a read. A build is remembered by the patch's blob id, so asking
again for the same patch answers at once with the same commits.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from flagbot.bot.commands.base import Command, CommandContext, Outcome
from flagbot.bot.commands.parse import Invocation
from flagbot.bot.github.markdown import code, code_block
from flagbot.hooks import git
from flagbot.hooks.errors import CheckFailed, UsageError
from flagbot.hooks.limits import MAX_HETERO_BYTES, MAX_PATCH_BYTES
from flagbot.hooks.patches import hetero, roundtrip
from flagbot.hooks.patches.build import apply_stored, resolve_patches
from flagbot.hooks.patches.devices import DEVICE_RE, check_devices, check_hex_prefix
from flagbot.hooks.patches.scratch import GitDir

MAX_DEVICES = 8
MAX_EXPORT_BYTES = 128 * 1024 * 1024  # all the patches one command writes out together
BRANCH = "unpatch/{device}/{base8}"
BUILT_REF = "refs/flagbot/unpatch/{blob}"  # in the bot's cache: patch blob -> built tip
DIFFSTAT_FILES = 20


@dataclass
class Stored:
    """The vendor patches of one commit: device -> base8 -> blob id, and hetero.txt's blob,
    with every blob's size (from git, nothing read)."""

    devices: dict[str, dict[str, str]] = field(default_factory=dict)
    hetero: str | None = None
    sizes: dict[str, int] = field(default_factory=dict)


def stored_patches(git_dir: Path, commit: str, hardwares: str) -> Stored:
    """What `<hardwares>/` holds at `commit`, read from the tree (nothing is checked out)."""
    proc = git.run(["ls-tree", "-r", "-l", "-z", f"{commit}:{hardwares}"], cwd=git_dir,
                   git_dir=git_dir, check=False)
    stored = Stored()
    if proc.returncode != 0:
        return stored  # no such folder at that commit
    for record in proc.stdout.decode("utf-8", "surrogateescape").split("\0"):
        meta, _, path = record.partition("\t")
        parts = meta.split()
        if len(parts) != 4 or parts[1] != "blob" or parts[0] not in ("100644", "100755"):
            continue
        stored.sizes[parts[2]] = int(parts[3]) if parts[3].isdigit() else MAX_PATCH_BYTES + 1
        names = path.split("/")
        if names == [hetero.HETERO_NAME]:
            stored.hetero = parts[2]
        elif names and DEVICE_RE.fullmatch(names[0]):
            bases = stored.devices.setdefault(names[0], {})
            if len(names) == 3 and hetero.BASE8_RE.fullmatch(names[1]) \
                    and names[2] == f"{names[1]}.patch":
                bases[names[1]] = parts[2]
    return stored


def asked(stored: Stored, devices: list[str], want: str) -> dict[str, list[str]]:
    """Per device, the stored bases the BASE prefix can name (UsageError listing the stored
    ones when it names none)."""
    found: dict[str, list[str]] = {}
    for device in devices:
        bases = sorted(stored.devices.get(device, {}))
        found[device] = [b8 for b8 in bases if b8.startswith(want[:8])]
        if not found[device]:
            listing = ", ".join(bases) or "none"
            raise UsageError(f"no stored base of {device} starts with {want!r}; stored: {listing}",
                             hint=f"pick one of: {listing}")
    return found


def export(git_dir: Path, stored: Stored, bases: dict[str, list[str]], hardwares: str,
           dest: Path) -> None:
    """Write the asked bases' patches and hetero.txt under `dest/<hardwares>/`, after checking
    their sizes from git."""
    files = {hetero.patch_rel(hardwares, d, b8): stored.devices[d][b8]
             for d, b8s in bases.items() for b8 in b8s}
    if stored.hetero:
        files[f"{hardwares}/{hetero.HETERO_NAME}"] = stored.hetero
    for rel, blob in files.items():
        limit = MAX_HETERO_BYTES if rel.endswith(hetero.HETERO_NAME) else MAX_PATCH_BYTES
        if stored.sizes.get(blob, limit + 1) > limit:
            raise CheckFailed(f"{rel} is {stored.sizes.get(blob, 0) >> 20} MiB, over the "
                              f"{limit >> 20} MiB the bot builds from",
                              hint="build it locally with flagbot unpatch")
    if sum(stored.sizes.get(blob, 0) for blob in files.values()) > MAX_EXPORT_BYTES:
        raise CheckFailed(f"the asked patches hold over {MAX_EXPORT_BYTES >> 20} MiB together",
                          hint="ask for fewer devices at a time, or build locally with "
                               "flagbot unpatch")
    for rel, blob in files.items():
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(git.run(["cat-file", "blob", blob], cwd=git_dir, git_dir=git_dir).stdout)


def build(git_dir: Path, scratch: Path, data: bytes, blob: str, rel: str,
          base: str) -> tuple[str, bool, list[str]]:
    """(tip, reused, hand-edited files): the patch's mails applied as commits on BASE in the
    cache, or the tip remembered for the same patch blob."""
    ref = BUILT_REF.format(blob=blob)
    gd = GitDir(git_dir, scratch / f"index-{blob}", scratch, scratch)
    known = git.run(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd=git_dir,
                    git_dir=git_dir, check=False)
    if known.returncode == 0:
        return known.stdout.decode().strip(), True, []
    applied = apply_stored(gd, base, data, rel)
    tip = applied[-1].commit
    # a stored patch edited by hand is built as it is, but the reply says so (as the CLI does)
    edited = list(roundtrip.post_image_mismatches(gd, applied, base))
    git.run(["update-ref", ref, tip], cwd=git_dir, git_dir=git_dir)
    return tip, False, edited


def run(cc: CommandContext, inv: Invocation) -> Outcome:
    """Validate, build (or reuse) each device's tree, push the branches, answer with how to fetch."""
    if len(inv.args) < 2 or inv.too_many_args or len(inv.args) > MAX_DEVICES + 1:
        raise UsageError(f"expected 1 to {MAX_DEVICES} devices and a base commit, "
                                   f"got {min(len(inv.args), 99)} argument(s)")
    devices = check_devices(list(inv.args[:-1]))
    want = check_hex_prefix(inv.args[-1], option="BASE")
    config = cc.ctx.config
    assert config is not None  # the comment handler answers a broken config before commands run
    hw = config.hardwares
    pr = cc.pull()
    with cc.ctx.workspace.held():  # the cache is in use until the branches are pushed
        git_dir = cc.ctx.workspace.objects(pr)
        stored = stored_patches(git_dir, pr.head_sha, hw)
        unknown = [d for d in devices if d not in stored.devices]
        if unknown:
            known = ", ".join(sorted(stored.devices)) or "none"
            raise UsageError(f"no device {' '.join(unknown)} under {hw}/ at head {pr.head_sha[:12]}",
                             hint=f"known devices: {known}")
        scratch_root = git_dir / "flagbot-scratch"
        scratch_root.mkdir(exist_ok=True)
        with tempfile.TemporaryDirectory(dir=scratch_root) as tmp:
            tree = Path(tmp) / "tree"
            export(git_dir, stored, asked(stored, devices, want), hw, tree)
            base, rels = resolve_patches(tree, hw, devices, want)
            if not git.has_object(git_dir, f"{base}^{{commit}}"):
                raise UsageError(f"base commit {base[:12]} is not in {cc.ctx.full_name}",
                                 hint="push the upstream commit the patch was made on")
            tips = []
            for device, rel in zip(devices, rels, strict=True):
                blob = stored.devices[device][base[:8]]
                tips.append(build(git_dir, Path(tmp), (tree / rel).read_bytes(), blob, rel, base))
        branches = [BRANCH.format(device=d, base8=base[:8]) for d in devices]
        clone_url = str(cc.ctx.payload.get("repository", {}).get("clone_url") or "")
        pushed = cc.ctx.workspace.push(clone_url, [f"+{tip}:refs/heads/{branch}"
                                                   for (tip, _, _), branch in zip(tips, branches, strict=True)])
        outcomes = {p.ref.removeprefix("refs/heads/"): p.outcome for p in pushed}
        text = answer(git_dir, pr.head_sha, base, rels, branches, [t for t, _, _ in tips],
                      outcomes, clone_url)
        edited = [(rel, e) for rel, (_, _, e) in zip(rels, tips, strict=True) if e]
        return Outcome(True, text + hand_edit_note(edited),
                       {"branches": branches, "reused": sum(1 for _, r, _ in tips if r),
                        "pushed": outcomes, "hand_edited": [rel for rel, _ in edited]})


def hand_edit_note(edited: list[tuple[str, list[str]]]) -> str:
    """The warning for stored patches whose index lines disagree with what they apply."""
    if not edited:
        return ""
    lines = ["", "", "⚠️ Edited by hand after git wrote it (built as stored):"]
    for rel, mismatches in edited:
        files = sorted({m.split(": ", 1)[0] for m in mismatches})
        lines.append(f"- {code(rel)}: its index lines disagree with what it applies for "
                     + ", ".join(code(f) for f in files[:10])
                     + (f" and {len(files) - 10} more" if len(files) > 10 else ""))
    lines.append("`flagbot verify` reports it; `flagbot migrate` regenerates it canonically.")
    return "\n".join(lines)


def answer(git_dir: Path, head: str, base: str, rels: list[str], branches: list[str],
           tips: list[str], outcomes: dict[str, str], clone_url: str) -> str:
    """The reply: per branch what happened and its diffstat, then the commands to fetch them."""
    lines = []
    for rel, branch, tip in zip(rels, branches, tips, strict=True):
        count = git.out(["rev-list", "--count", f"{base}..{tip}"], cwd=git_dir, git_dir=git_dir)
        short = git.out(["diff", "--shortstat", base, tip], cwd=git_dir, git_dir=git_dir).strip()
        state = {"unchanged": "already up to date", "dry-run": "not pushed: dry run"}.get(
            outcomes.get(branch, ""), "pushed")
        lines.append(f"- {code(branch)} ({state}): base {code(base[:12])} + {count} vendor "
                     f"commit(s) from {code(rel)} at head {code(head[:12])}, tip "
                     f"{code(tip[:12])}; {short or 'no file changes'}")
        stat = git.out(["diff", "--stat=100,70", f"--stat-count={DIFFSTAT_FILES}", base, tip],
                       cwd=git_dir, git_dir=git_dir)
        if stat.strip():
            lines += ["", code_block(stat), ""]
    fetch = [f"git fetch {clone_url} {b}:{b}" for b in branches]
    fetch.append(f"git switch {branches[0]}")
    lines += ["Fetch:", "", code_block("\n".join(fetch))]
    return "\n".join(lines)


COMMAND = Command(
    name="unpatch",
    usage="/unpatch DEV [DEV ...] BASE",
    summary="builds the vendor tree of each device at BASE from the patches stored on this "
            "pull request's head and pushes it as branch `unpatch/DEV/<base8>`",
    permission="read",
    example="/unpatch A_X100 1a2b3c4d",
    run=run,
)
