"""Check run `flagbot / patches`: every stored patch the PR adds or changes, and hetero.txt."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from flagbot.bot.github import ChangedFile
from flagbot.bot.github.checkruns import CheckResult
from flagbot.bot.github.markdown import code, plain
from flagbot.hooks.config import RepoConfig
from flagbot.hooks.errors import FlagbotError
from flagbot.hooks.findings import ERROR, WARNING, Finding
from flagbot.hooks.patches import perfile, perfile_check
from flagbot.hooks.patches.hetero import check_hetero
from flagbot.hooks.patches.perfile_verify import Options
from flagbot.hooks.patches.verify import is_patch_path, verify_patch

NAME = "flagbot / patches"


def touched_patches(config: RepoConfig, files: Iterable[ChangedFile]) -> list[str]:
    """Stored patches the PR adds or changes (deleted ones are hetero.txt's business): seed
    layout ones, and what may belong to FlagScale's per-file folders (patch files deeper down,
    `diff.yaml`, `patch_history.yaml`), which `run_checks` sorts out on the checkout."""
    prefix = config.hardwares.rstrip("/") + "/"
    out = []
    for f in files:
        rest = f.filename[len(prefix):].split("/") if f.filename.startswith(prefix) else []
        if f.status == "removed" or not rest:
            continue
        if (len(rest) == 3 and rest[2].endswith(".patch")) or (len(rest) > 3 and is_patch_path(
                f.filename)) or perfile_check.is_perfile_file(f.filename, config.hardwares):
            out.append(f.filename)
    return sorted(out)


def touches_hardwares(config: RepoConfig, files: Iterable[ChangedFile]) -> bool:
    """True when any path (old or new) lies under the hardwares folder."""
    prefix = config.hardwares.rstrip("/") + "/"
    return any(p.startswith(prefix) for f in files for p in (f.filename, f.previous or ""))


def nothing_to_check() -> CheckResult:
    """The result when the PR touches no patch: success, so the check can be required."""
    return CheckResult(NAME, "success", "no patches touched",
                       "This pull request adds or changes no stored patch and leaves "
                       "`hetero.txt` alone, so there is nothing to verify.")


def run_checks(checkout: Path, config: RepoConfig, patches: list[str]) -> list[Finding]:
    """verify_patch on each patch (per-file folders: their own checks) plus check_hetero, on a
    checkout of the PR head."""
    hw = config.hardwares
    seed, perfile = perfile_check.split(checkout, hw, [p for p in patches if is_patch_path(p)])
    deeper = [p for p in seed if p.count("/") > hw.strip("/").count("/") + 3]
    findings = perfile_check.orphans(checkout, hw, deeper)[1]
    seed = [p for p in seed if p not in deeper]
    if seed:
        findings.extend(verify_all(checkout, config, seed))
    wanted = perfile + [p for p in patches if perfile_check.is_perfile_file(p, hw)]
    if wanted:
        try:
            findings.extend(perfile_check.check(checkout, hw, wanted, Options())[1])
        except FlagbotError as exc:  # e.g. git failing on a hostile folder: reported, not raised
            findings.append(Finding(wanted[0], 0, ERROR, "verify", str(exc)))
    findings.extend(check_hetero(checkout, hw))
    return findings


def verify_all(checkout: Path, config: RepoConfig, patches: list[str]) -> list[Finding]:
    """verify_patch on each patch; an expected failure of one never hides the others."""
    findings: list[Finding] = []
    for rel in patches:
        try:
            findings.extend(verify_patch(checkout, rel, hardwares=config.hardwares))
        except FlagbotError as exc:  # an expected failure of one patch must not hide the others
            findings.append(Finding(rel, 0, ERROR, "verify", str(exc)))
    return findings


# per-folder warnings saying a FlagScale per-file folder's patches could not be applied here
UNVERIFIABLE = frozenset({"perfile-unverified", "perfile-encrypted"})


def not_verifiable(config: RepoConfig, patches: list[str], warnings: list[Finding]) -> set[str]:
    """Per-file patches whose folder got a warning that they were not applied (no submodule
    source or key on the bot's host): counted apart, never as verified."""
    folders = {f.path.rsplit("/", 1)[0] for f in warnings
               if f.rule in UNVERIFIABLE and f.path.endswith("/diff.yaml")}
    return {p for p in patches if is_patch_path(p)
            and perfile.folder_rel(p, config.hardwares) in folders}


def state(path: str, bad: list[str], unverified: set[str]) -> str:
    return "fails" if path in bad else "not verifiable here" if path in unverified else "ok"


def result(config: RepoConfig, patches: list[str], findings: list[Finding]) -> CheckResult:
    """Turn findings into the check run's conclusion, title and summary."""
    errors = [f for f in findings if f.severity == ERROR]
    warnings = [f for f in findings if f.severity == WARNING]
    bad = sorted({f.path for f in errors})
    count = sum(map(is_patch_path, patches))
    unverified = not_verifiable(config, patches, warnings)
    title = (f"{count - len(unverified)} patch(es) verified" if not errors
             else f"{len(errors)} error(s) in {len(bad)} file(s)")
    if unverified and not errors:
        title += f", {len(unverified)} not verifiable here"
    lines = [f"Checked {count} patch(es) and `{config.hardwares}/hetero.txt`: "
             f"{len(errors)} error(s), {len(warnings)} warning(s)."]
    if patches:
        lines += [""] + [f"- {code(p)}: {state(p, bad, unverified)}" for p in patches]
    if errors:
        commands = []
        if set(bad) & set(patches):
            commands.append(code("flagbot verify " + " ".join(p for p in patches if p in bad)))
        if any(p.endswith("/hetero.txt") for p in bad):
            commands.append("`flagbot hetero check`")
        lines += ["", "Reproduce locally: " + " and ".join(commands or ["`flagbot verify`"]) +
                  "; regenerate a patch with `flagbot patch --device-type DEV --base-commit-id "
                  "BASE` and push it."]
    text = "\n".join(f"- {plain(f.render())}" for f in sorted(findings))
    return CheckResult(NAME, "failure" if errors else "success", title, "\n".join(lines), text, findings)
