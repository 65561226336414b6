"""Patch regeneration: a `device: <DEV>` label makes the bot store the pull request's own patch.

For every device label, `<hardwares>/<DEV>/<base8>/<base8>.patch` is made with the patch engine
(round trip verified) from BASE..head, where BASE is the merge base with the target branch or
the commit a `Base-Commit: <sha>` line of the PR body names; with several device labels
`hetero.txt` gets their line too. The files go into one commit by the bot on top of the head:
pushed to the PR branch (same repository, or a fork that allows maintainer edits), else to
`flagbot/patch/<number>` in the base repository, for the author to take.

A stranger's change is bounded before it costs anything: its size is read from git's object
sizes first, the generation runs in the memory- and time-limited child the checks use, and the
written patch must fit the patch size limit; a hardwares path that is not a plain folder of the
checkout, like any of these, is a failed `flagbot / patches` with the reason.

It settles: the bot's commit touches only the hardwares folder, which patches never contain, and
the bot's own commits are skipped when choosing the head to generate from, so the `synchronize`
its push causes finds the files already right and pushes nothing. The commit's dates are the
head's, so regenerating the same head twice makes the same commit and a second push is a no-op.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from flagbot.bot.context import Context, PullRequest
from flagbot.bot.github import ChangedFile
from flagbot.bot.github.markdown import code, code_block
from flagbot.bot.work import sandbox
from flagbot.hooks import git
from flagbot.hooks.config import RepoConfig, label_device
from flagbot.hooks.errors import CheckFailed, FlagbotError, UsageError
from flagbot.hooks.folders import detect_folder
from flagbot.hooks.limits import MAX_PATCH_BYTES
from flagbot.hooks.patches import perfile
from flagbot.hooks.patches.devices import DEVICE_RE
from flagbot.hooks.patches.make import make_device_patches

MESSAGE = "[{devices}] regenerate patch for {base8}"
OWN_MESSAGE = re.compile(r"\[[A-Za-z0-9_ ]+\] regenerate patch for [0-9a-f]{8}\n?\Z")
BASE_COMMIT = re.compile(r"^[ \t]*Base-Commit:[ \t]*([0-9a-fA-F]{7,40})[ \t]*$", re.M | re.I)
FORK_BRANCH = "flagbot/patch/{number}"
MAX_DEVICES = 8
MAX_OWN_COMMITS = 20  # of the bot's commits skipped from the head when choosing what to generate


@dataclass
class Regen:
    """What regeneration did: `skipped`, `unchanged`, `pushed` (to the PR branch), `branch`
    (to `flagbot/patch/<n>`), `rejected` (the branch moved meanwhile), `failed`, `dry-run`."""

    outcome: str
    devices: list[str] = field(default_factory=list)
    base: str = ""
    files: list[str] = field(default_factory=list)
    commit: str = ""
    branch: str = ""
    message: str = ""


def labelled_devices(config: RepoConfig, labels: Iterable[str]) -> list[str]:
    """The devices named by device labels (`device: {device}`, well-formed names), sorted and
    unique."""
    pattern = str(config["labels"]["device"]["pattern"])
    return sorted({device for name in labels if (device := label_device(pattern, name))
                   and DEVICE_RE.fullmatch(device)})


def touches_code(config: RepoConfig, files: Iterable[ChangedFile]) -> bool:
    """True when some changed path lies outside the hardwares folder."""
    prefix = config.hardwares.rstrip("/") + "/"
    return any(p and not p.startswith(prefix) for f in files for p in (f.filename, f.previous))


def for_pull(ctx: Context, pr: PullRequest, files: list[ChangedFile]) -> Regen:
    """Regenerate when the PR carries device labels and changes code outside hardwares/."""
    assert ctx.config is not None
    devices = labelled_devices(ctx.config, pr.labels)
    if not devices:
        return Regen("skipped", message="no device label")
    if not touches_code(ctx.config, files):
        return Regen("skipped", devices, message="nothing changed outside "
                                                 f"{ctx.config.hardwares}/")
    return regenerate(ctx, pr, devices)


def regenerate(ctx: Context, pr: PullRequest, devices: list[str]) -> Regen:
    """Make the devices' patches at the PR head and push them when they differ from the stored."""
    assert ctx.config is not None
    hw = ctx.config.hardwares
    if len(devices) > MAX_DEVICES:
        return Regen("failed", devices, message=f"at most {MAX_DEVICES} devices at once")
    bot = ctx.client.bot_login
    settings = ctx.settings
    with ctx.workspace.checkout(pr) as tree:
        found = hw if "hardwares" in ctx.config.given else detect_folder(tree, "hardwares")
        if "hardwares" not in ctx.config.given and perfile.uses_perfile(tree, found):
            # FlagScale's own tools read only its per-file folders: a seed-layout patch written
            # beside them would be one more file for maintainers to delete
            return Regen("skipped", devices, message=(
                f"{found}/ holds FlagScale's per-file folders (diff.yaml), so no "
                f"{found}/<DEV>/<base8>/<base8>.patch is written; set `hardwares: {found}` in "
                ".github/flagbot.yml to have the bot write them anyway"))
        try:
            cur = skip_own_commits(tree, pr.head_sha, bot)
            base = find_base(ctx, tree, pr, cur)
            check_room(tree, hw, base, cur)
            # the pull request's files are parsed and diffed here: in the limited child
            files = sandbox.run_limited(make_patches, tree, devices, base, cur, hw,
                                        memory_mb=settings.check_memory_mb,
                                        timeout_s=settings.check_timeout_s, what="regeneration")
            check_patch_sizes(tree, files)
        except (FlagbotError, sandbox.LimitExceeded) as exc:
            return Regen("failed", devices, message=str(exc))
        except (OSError, sandbox.ChildError) as exc:  # git or the disk gave out in the child
            return Regen("failed", devices, message=f"regeneration: {exc}")
        base = git.resolve_commit(tree, base)
        changed = changed_paths(tree, files)
        if not changed:
            return Regen("unchanged", devices, base, files)
        message = MESSAGE.format(devices=" ".join(devices), base8=base[:8])
        commit = commit_files(tree, changed, message, bot, pr.head_sha)
    return push(ctx, pr, Regen("pushed", devices, base, changed, commit))


def skip_own_commits(tree: Path, head: str, bot: str) -> str:
    """`head`, or its first ancestor that is not a regeneration commit by the bot."""
    cur = head
    for _ in range(MAX_OWN_COMMITS):
        info = git.run(["log", "-1", "--format=%ae%x00%P%x00%B", cur], cwd=tree,
                       isolated=True).stdout.decode("utf-8", "replace")
        email, parents, message = (info.split("\0") + ["", ""])[:3]
        if email != noreply(bot) or len(parents.split()) != 1 or not OWN_MESSAGE.match(message.strip() + "\n"):
            return cur
        cur = parents.strip()
    return cur


def find_base(ctx: Context, tree: Path, pr: PullRequest, cur: str) -> str:
    """The PR body's `Base-Commit:` commit, else the merge base of `cur` and the target branch."""
    named = BASE_COMMIT.search(pr.body[:65536])
    if named:
        wanted = named.group(1).lower()
        if len(wanted) == 40:  # an upstream commit the cache may not have fetched yet
            ctx.workspace.fetch_commit(wanted)
        proc = git.run(["rev-parse", "--verify", "--quiet", f"{wanted}^{{commit}}"],
                       cwd=tree, isolated=True, check=False)
        if proc.returncode != 0:
            raise UsageError(f"the Base-Commit line names {named.group(1)}, which is not a commit "
                             "of this repository", hint="fix the line in the PR description")
        return proc.stdout.decode().strip()
    proc = git.run(["merge-base", pr.base_sha, cur], cwd=tree, isolated=True, check=False)
    if proc.returncode != 0:
        raise UsageError(f"no merge base between the head {cur[:12]} and {pr.base_ref} "
                         f"({pr.base_sha[:12]})",
                         hint="add a 'Base-Commit: <sha>' line to the PR description")
    return proc.stdout.decode().strip()


def check_room(tree: Path, hw: str, base: str, cur: str) -> None:
    """Refuse (FlagbotError) before anything is generated when the hardwares folder is not a
    plain folder of the checkout, or when BASE..CUR holds more than a stored patch may (from
    git's object sizes: nothing of the change is read)."""
    here = tree
    for part in hw.strip("/").split("/"):
        here = here / part
        if here.is_symlink():
            raise CheckFailed(f"{hw} is a symbolic link in this pull request ({here.relative_to(tree)}); "
                              "the bot writes patches only into a plain folder of the repository",
                              hint=f"make {hw} a folder, or set `hardwares:` in .github/flagbot.yml")
        if here.exists() and not here.is_dir():
            raise CheckFailed(f"{here.relative_to(tree)} is a file, not a folder",
                              hint=f"make {hw} a folder, or set `hardwares:` in .github/flagbot.yml")
    total = change_bytes(tree, base, cur)
    if total > MAX_PATCH_BYTES:
        raise CheckFailed(f"the change from {base[:12]} holds {total >> 20} MiB of file contents; "
                          f"the bot makes patches of at most {MAX_PATCH_BYTES >> 20} MiB",
                          hint="make the patch locally with flagbot patch, or keep large files "
                               "out of the change")


def change_bytes(tree: Path, base: str, cur: str) -> int:
    """The sizes of every blob BASE..CUR removes or adds, added up (an upper bound of what a
    patch of the change holds), from git's object database."""
    raw = git.run(["diff-tree", "-r", "-z", "--no-renames", base, cur], cwd=tree,
                  isolated=True).stdout.split(b"\0")
    blobs: set[str] = set()
    for field_ in raw:
        if field_.startswith(b":"):
            parts = field_[1:].split()
            blobs.update(sha.decode() for sha in parts[2:4] if sha.strip(b"0"))
    if not blobs:
        return 0
    sizes = git.run(["cat-file", "--batch-check=%(objectsize)"], cwd=tree, isolated=True,
                    stdin="\n".join(sorted(blobs)).encode() + b"\n").stdout.split()
    return sum(int(size) for size in sizes if size.isdigit())


def check_patch_sizes(tree: Path, files: list[str]) -> None:
    for rel in files:
        size = (tree / rel).stat().st_size
        if size > MAX_PATCH_BYTES:
            raise CheckFailed(f"{rel} would be {size >> 20} MiB; the bot stores patches of at "
                              f"most {MAX_PATCH_BYTES >> 20} MiB",
                              hint="make the patch locally with flagbot patch")


def make_patches(tree: Path, devices: list[str], base: str, cur: str, hw: str) -> list[str]:
    """The devices' patches made by the engine (the limited child's entry point)."""
    return make_device_patches(tree, devices, base, cur, hardwares=hw)


def changed_paths(tree: Path, files: list[str]) -> list[str]:
    """Those of `files` that differ from the checked-out head."""
    out = git.run(["status", "--porcelain", "-z", "--untracked-files=all", "--", *files],
                  cwd=tree, isolated=True).stdout.decode("utf-8", "surrogateescape")
    return sorted({entry[3:] for entry in out.split("\0") if len(entry) > 3})


def noreply(login: str) -> str:
    """The e-mail the bot's commits carry."""
    return f"{login}@users.noreply.github.com"


def commit_files(tree: Path, files: list[str], message: str, bot: str, head: str) -> str:
    """One commit of `files` on `head` by the bot, dated like `head` (same inputs, same id)."""
    when = git.out(["log", "-1", "--format=%ct %cz", head], cwd=tree, isolated=True)
    ident = {"GIT_AUTHOR_NAME": bot, "GIT_AUTHOR_EMAIL": noreply(bot), "GIT_AUTHOR_DATE": when,
             "GIT_COMMITTER_NAME": bot, "GIT_COMMITTER_EMAIL": noreply(bot),
             "GIT_COMMITTER_DATE": when}
    git.run(["add", "--", *files], cwd=tree, isolated=True)
    tree_id = git.out(["write-tree"], cwd=tree, isolated=True)
    return git.out(["commit-tree", tree_id, "-p", head], cwd=tree, isolated=True, env=ident,
                   stdin=message.encode() + b"\n")


def push(ctx: Context, pr: PullRequest, regen: Regen) -> Regen:
    """Push the commit to the PR branch when the bot may, else to `flagbot/patch/<number>`."""
    base_url = str(ctx.payload.get("repository", {}).get("clone_url") or "")
    if not pr.is_fork or (pr.maintainer_can_modify and pr.head_clone_url):
        url = pr.head_clone_url if pr.is_fork else base_url
        refspec = f"{regen.commit}:refs/heads/{pr.head_ref}"  # fast-forward only
        regen.branch = pr.head_ref
    else:
        url, regen.branch = base_url, FORK_BRANCH.format(number=pr.number)
        refspec = f"+{regen.commit}:refs/heads/{regen.branch}"
        regen.outcome = "branch"
    if not valid_branch(regen.branch):
        return Regen("failed", regen.devices, regen.base, regen.files,
                     message=f"cannot push to branch {regen.branch!r}: not a valid branch name")
    done = ctx.workspace.push(url, [refspec])
    result = done[0].outcome if done else "rejected"
    if result == "rejected":
        regen.outcome = "rejected"
        regen.message = (f"the branch moved while the patch was made ({done[0].detail if done else 'no answer'}); "
                         "the next push regenerates it")
    elif result == "dry-run":
        regen.outcome = "dry-run"
    return regen


def valid_branch(name: str) -> bool:
    """A branch name git accepts that cannot be read as an option or a refspec."""
    return bool(name) and not name.startswith("-") and ":" not in name and git.run(
        ["check-ref-format", f"refs/heads/{name}"], cwd=Path("/"), check=False).returncode == 0


def describe(regen: Regen, clone_url: str) -> list[str]:
    """Markdown lines about regeneration for the summary comment and the `/patch` reply."""
    names = ", ".join(code(d) for d in regen.devices)
    files = ", ".join(code(f) for f in regen.files[:10])
    base = code(regen.base[:8]) if regen.base else ""
    if regen.outcome == "skipped":
        return [f"- not regenerated: {regen.message}"]
    if regen.outcome == "unchanged":
        return [f"- {names}: stored patch for base {base} is up to date ({files})"]
    if regen.outcome == "pushed":
        return [f"- {names}: regenerated for base {base}; pushed {code(regen.commit[:12])} to "
                f"{code(regen.branch)} ({files})"]
    if regen.outcome == "branch":
        take = (f"git fetch {clone_url} {regen.branch}\n"
                "git merge --ff-only FETCH_HEAD\ngit push")
        return [f"- {names}: regenerated for base {base} ({files}); this fork does not allow "
                f"edits by maintainers, so it is on branch {code(regen.branch)} of this "
                "repository. Take it into your branch:", "", code_block(take), ""]
    if regen.outcome == "dry-run":
        return [f"- {names}: would push {code(regen.commit[:12])} to {code(regen.branch)}"]
    return [f"- {names or 'regeneration'}: **{regen.outcome}**: " + code(regen.message, 600)]
