"""Check run `flagbot / patches`: every stored patch the PR adds or changes, and hetero.txt."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from flagbot.bot.github import ChangedFile
from flagbot.bot.github.checkruns import CheckResult
from flagbot.bot.markdown import code, plain
from flagbot.hooks.config import RepoConfig
from flagbot.hooks.errors import FlagbotError
from flagbot.hooks.findings import ERROR, WARNING, Finding
from flagbot.hooks.patches.hetero import check_hetero
from flagbot.hooks.patches.verify import verify_patch

NAME = "flagbot / patches"


def touched_patches(config: RepoConfig, files: Iterable[ChangedFile]) -> list[str]:
    """Stored patches the PR adds or changes (deleted ones are hetero.txt's business)."""
    prefix = config.hardwares.rstrip("/") + "/"
    out = []
    for f in files:
        rest = f.filename[len(prefix):].split("/") if f.filename.startswith(prefix) else []
        if f.status != "removed" and len(rest) == 3 and rest[2].endswith(".patch"):
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
    """verify_patch on each patch plus check_hetero, on a checkout of the PR head."""
    findings: list[Finding] = []
    if patches:
        findings.extend(verify_all(checkout, config, patches))
    findings.extend(check_hetero(checkout, config.hardwares))
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


def result(config: RepoConfig, patches: list[str], findings: list[Finding]) -> CheckResult:
    """Turn findings into the check run's conclusion, title and summary."""
    errors = [f for f in findings if f.severity == ERROR]
    warnings = [f for f in findings if f.severity == WARNING]
    bad = sorted({f.path for f in errors})
    title = (f"{len(patches)} patch(es) verified" if not errors
             else f"{len(errors)} error(s) in {len(bad)} file(s)")
    lines = [f"Checked {len(patches)} patch(es) and `{config.hardwares}/hetero.txt`: "
             f"{len(errors)} error(s), {len(warnings)} warning(s)."]
    if patches:
        lines += [""] + [f"- {code(p)}: {'fails' if p in bad else 'ok'}" for p in patches]
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
