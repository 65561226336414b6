"""`hardwares/hetero.txt`: parse, canonical format, merge, and the check (docs/patches.md).

One line per base, `<base8>: DEV1 DEV2 ...`, devices sorted and unique, lines sorted by base,
`#` comments and blank lines allowed. Comments stay attached to the entry below them, so
rewriting a file in canonical order never drops or moves a comment away from what it explains.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from flagbot.hooks.limits import MAX_HETERO_BYTES, read_limited
from flagbot.hooks.patches.devices import DEVICE_RE

if TYPE_CHECKING:  # imported lazily: `flagbot patch` needs hetero.txt merging, not findings
    from flagbot.hooks.findings import Finding

ERROR = "error"  # = hooks.findings.ERROR

HETERO_NAME = "hetero.txt"
BASE8_RE = re.compile(r"[0-9a-f]{8}")


class HeteroError(Exception):
    """hetero.txt cannot be parsed; `line` is 1-based."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.message = message


class Entry:
    """One base and its devices, with the comment/blank lines written just above it."""

    def __init__(self, base: str, devices: list[str], line: int = 0,
                 leading: list[str] | None = None, text: str = "") -> None:
        self.base = base
        self.devices = devices
        self.line = line
        self.leading = leading if leading is not None else []
        self.text = text  # the line as written (empty for entries made in code)

    def render(self) -> str:
        return f"{self.base}: {' '.join(sorted(set(self.devices)))}"


class Hetero:
    """A parsed hetero.txt: entries in file order plus comment lines after the last entry."""

    def __init__(self, entries: list[Entry], trailing: list[str] | None = None) -> None:
        self.entries = entries
        self.trailing = trailing if trailing is not None else []

    def devices_for(self, base8: str) -> list[str]:
        """Devices listed for `base8` (union of duplicate lines), sorted."""
        found = {d for e in self.entries if e.base == base8 for d in e.devices}
        return sorted(found)


def parse(text: str) -> Hetero:
    """Parse hetero.txt text; raise HeteroError naming the first bad line."""
    doc, errors = parse_lines(text)
    if errors:
        raise errors[0]
    return doc


def parse_lines(text: str) -> tuple[Hetero, list[HeteroError]]:
    """Every good line as an entry, and one error per bad line (so a check can report all)."""
    entries: list[Entry] = []
    errors: list[HeteroError] = []
    pending: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            pending.append(raw.rstrip())
            continue
        try:
            base, devices = _parse_entry(line, raw, number)
        except HeteroError as exc:
            errors.append(exc)
            continue
        entries.append(Entry(base, devices, number, pending, raw))
        pending = []
    return Hetero(entries, pending), errors


def _parse_entry(line: str, raw: str, number: int) -> tuple[str, list[str]]:
    key, sep, rest = line.partition(":")
    key = key.strip()
    if not sep or not BASE8_RE.fullmatch(key):
        raise HeteroError(f"{raw!r} is not '<base8>: DEV1 DEV2 ...' (base = 8 lower-case hex)",
                          number)
    devices = rest.split()
    if not devices:
        raise HeteroError(f"base {key} lists no devices", number)
    for dev in devices:
        if not DEVICE_RE.fullmatch(dev):
            raise HeteroError(f"{dev!r} is not a device name like A_X100", number)
    return key, devices


def format_hetero(doc: Hetero) -> str:
    """Canonical text: entries sorted by base, duplicates merged, devices sorted and unique."""
    merged: dict[str, Entry] = {}
    for entry in doc.entries:
        if entry.base in merged:
            have = merged[entry.base]
            have.devices = sorted(set(have.devices) | set(entry.devices))
            have.leading = have.leading + entry.leading
        else:
            merged[entry.base] = Entry(entry.base, sorted(set(entry.devices)), entry.line,
                                       list(entry.leading))
    lines: list[str] = []
    for base in sorted(merged):
        lines += merged[base].leading
        lines.append(merged[base].render())
    lines += doc.trailing
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    return "\n".join(lines) + "\n" if lines else ""


def merge(text: str, base8: str, devices: Iterable[str]) -> str:
    """`text` in canonical form with `devices` added to the line of `base8`."""
    doc = parse(text)
    doc.entries.append(Entry(base8, list(devices)))
    return format_hetero(doc)


def patch_rel(hardwares: str, device: str, base8: str) -> str:
    """Repository-relative path of a device's patch for a base."""
    return f"{hardwares}/{device}/{base8}/{base8}.patch"


def check_hetero(repo: Path, hardwares: str = "hardwares") -> list[Finding]:
    """hetero.txt is canonical and every listed device has its base's patch (working tree only).

    The file is the one beside the patches, else where FlagScale's tools kept it
    (hooks/folders.py `hetero_file`).
    """
    from flagbot.hooks.findings import Finding
    from flagbot.hooks.folders import hetero_file

    rel = hetero_file(repo, hardwares)
    path = repo / rel
    if not path.is_file():
        return []
    try:
        text = read_limited(path, MAX_HETERO_BYTES).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [Finding(rel, 0, ERROR, "hetero-format", f"cannot read: {exc}")]
    doc, errors = parse_lines(text)
    findings = [Finding(rel, exc.line, ERROR, "hetero-format",
                        f"{exc.message}; fix the line (format '<base8>: DEV1 DEV2')")
                for exc in errors]
    findings += _line_findings(rel, doc) + _order_findings(rel, doc)
    if not findings and text != format_hetero(doc):
        findings.append(_layout_finding(rel, text, format_hetero(doc)))
    for entry in doc.entries:
        for dev in entry.devices:
            if not (repo / patch_rel(hardwares, dev, entry.base)).is_file():
                findings.append(Finding(
                    rel, entry.line, ERROR, "hetero-missing-patch",
                    f"{dev} is listed for base {entry.base} but "
                    f"{patch_rel(hardwares, dev, entry.base)} does not exist; add that patch "
                    f"(flagbot patch --device-type {dev} --base-commit-id {entry.base}) "
                    "or remove the device from the line"))
    return findings


def _line_findings(rel: str, doc: Hetero) -> list[Finding]:
    """One finding per entry line that is not written canonically, naming the rule it breaks."""
    from flagbot.hooks.findings import Finding

    findings: list[Finding] = []
    for entry in doc.entries:
        want = entry.render()
        if entry.text == want:
            continue
        twice = sorted({d for d in entry.devices if entry.devices.count(d) > 1})
        if twice:
            rule, why = "hetero-duplicate", f"{', '.join(twice)} listed twice for base {entry.base}"
        elif entry.devices != sorted(entry.devices):
            rule, why = "hetero-order", "devices not in sorted order"
        else:
            rule, why = "hetero-format", "spacing: one space after ':' and between devices"
        findings.append(Finding(rel, entry.line, ERROR, rule, f"{why}; write `{want}`"))
    return findings


def _order_findings(rel: str, doc: Hetero) -> list[Finding]:
    """Bases listed twice or out of order (lines must be sorted by base)."""
    from flagbot.hooks.findings import Finding

    findings: list[Finding] = []
    seen: set[str] = set()
    previous = ""
    for entry in doc.entries:
        if entry.base in seen:
            findings.append(Finding(rel, entry.line, ERROR, "hetero-duplicate",
                                    f"base {entry.base} is listed twice; merge the lines"))
        elif entry.base < previous:
            findings.append(Finding(rel, entry.line, ERROR, "hetero-order",
                                    f"base {entry.base} comes after {previous}; sort lines by base"))
        seen.add(entry.base)
        previous = max(previous, entry.base)
    return findings


def _layout_finding(rel: str, text: str, canonical: str) -> Finding:
    """Every line is right but the file is not: blank lines or the final newline."""
    from flagbot.hooks.findings import Finding

    first = next((i + 1 for i, (a, b) in enumerate(zip(text.splitlines(), canonical.splitlines(),
                                                         strict=False)) if a != b),
                 min(len(text.splitlines()), len(canonical.splitlines())) or 1)
    return Finding(rel, first, ERROR, "hetero-format",
                   "file layout: no leading or trailing blank lines, exactly one final newline "
                   "(run `flagbot patch` or rewrite the file in canonical form)")
