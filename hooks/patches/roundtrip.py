"""Apply a series mail by mail into an index, rebuild its commits, and compare with the source.

`git am` semantics without a work tree: for each mail, `mailinfo -b -u` (keep non-PATCH
bracket tags, re-encode to UTF-8, keep CR), `apply --cached` (no whitespace fixing, no fuzz),
`write-tree`, `commit-tree` with the mail's author and date. The committer is the author, at the
author date, so the rebuilt commits are the same on every machine and need no user identity.
Applying whole multi-mail files at once is wrong on current git when a file is added and later
deleted in the series, hence one mail at a time.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from flagbot.hooks.patches import patchfile
from flagbot.hooks.patches.patchfile import Mail
from flagbot.hooks.patches.scratch import GitDir

MAILINFO = ("mailinfo", "-b", "-u", "--no-scissors", "--quoted-cr=nowarn")
_FAILED_AT = re.compile(r"patch failed: (.+):(\d+)$", re.M)
_PATH_ERR = re.compile(r"^error: (.+?): (does not exist in index|already exists in index|"
                       r"patch does not apply|does not match index|wrong type)", re.M)


class Applied(NamedTuple):
    """One mail applied: the rebuilt commit, its tree and the message git am would record."""

    commit: str
    tree: str
    message: bytes
    mail: Mail


class ApplyFailed(Exception):
    """Mail `number` (1-based) did not apply; `line` is the line in the whole patch file."""

    def __init__(self, number: int, line: int, path: str, detail: str) -> None:
        where = f" to {path}" if path else ""
        super().__init__(f"mail {number}{where} does not apply: {detail}")
        self.number = number
        self.line = line
        self.path = path
        self.detail = detail


def parse_info(text: bytes) -> dict[str, str]:
    """The `Key: value` lines mailinfo prints (Author, Email, Subject, Date)."""
    info: dict[str, str] = {}
    for line in text.decode("utf-8", "surrogateescape").splitlines():
        key, sep, value = line.partition(": ")
        if sep:
            info[key] = value
    return info


def am_message(subject: str, body: bytes) -> bytes:
    """The message git am records: subject, blank line, body, through stripspace."""
    return patchfile.stripspace(subject.encode("utf-8", "surrogateescape") + b"\n\n" + body)


def _failure(number: int, mail: Mail, stderr: bytes) -> ApplyFailed:
    err = stderr.decode("utf-8", "replace")
    path, old_line = "", None
    hit = _FAILED_AT.search(err)
    if hit:
        path, old_line = hit.group(1), int(hit.group(2))
    else:
        other = _PATH_ERR.search(err)
        if other:
            path = other.group(1)
    offset = patchfile.locate_hunk(mail.data, path, old_line) if path else 0
    lines = [ln for ln in err.splitlines() if ln.strip()]
    return ApplyFailed(number, mail.line + offset, path, "; ".join(lines[:4]) or "git apply failed")


def apply_mail(gd: GitDir, number: int, mail: Mail, parent: str) -> Applied:
    """Apply one mail on top of the index (which holds `parent`'s tree) and commit it."""
    msg_file, patch_file = gd.tmp / "am-msg", gd.tmp / "am-patch"
    info = parse_info(gd.run([*MAILINFO, str(msg_file), str(patch_file)], stdin=mail.data).stdout)
    if not patch_file.stat().st_size:
        raise ApplyFailed(number, mail.line, "", "the mail has no diff")
    proc = gd.run(["apply", "--cached", str(patch_file)], check=False)
    if proc.returncode != 0:
        raise _failure(number, mail, proc.stderr)
    tree = gd.out(["write-tree"])
    message = am_message(info.get("Subject", ""), msg_file.read_bytes())
    who = {"NAME": info.get("Author", ""), "EMAIL": info.get("Email", ""),
           "DATE": info.get("Date", "")}
    env = {f"GIT_{role}_{key}": value for role in ("AUTHOR", "COMMITTER")
           for key, value in who.items()}
    commit = gd.run(["commit-tree", tree, "-p", parent], stdin=message, env=env).stdout
    return Applied(commit.decode().strip(), tree, message, mail)


def apply_series(gd: GitDir, base: str, mails: list[Mail]) -> list[Applied]:
    """Apply every mail in order on BASE; raise ApplyFailed at the first that does not apply."""
    gd.run(["read-tree", base])
    applied: list[Applied] = []
    parent = base
    for number, mail in enumerate(mails, start=1):
        step = apply_mail(gd, number, mail, parent)
        applied.append(step)
        parent = step.commit
    return applied


def tree_differences(gd: GitDir, left: str, right: str, hardwares: str) -> list[str]:
    """Paths whose mode or blob differ between two trees, hardwares/ ignored."""
    out = gd.run(["diff-tree", "-r", "--no-renames", "--name-status", "-z", left, right,
                  "--", f":(exclude,top,literal){hardwares}"]).stdout
    parts = out.split(b"\0")
    return [f"{parts[i].decode()} {parts[i + 1].decode('utf-8', 'replace')}"
            for i in range(0, len(parts) - 1, 2)]


class MailResult(NamedTuple):
    """One mail applied to a partial index: who git am would record, and the message."""

    mail: Mail
    info: dict[str, str]
    message: bytes


_TOUCH = (b"diff --git ", b"rename from ", b"rename to ", b"copy from ", b"copy to ", b"--- a/",
          b'--- "a/', b"+++ b/", b'+++ "b/')


def touched_paths(mails: list[Mail]) -> set[bytes]:
    """Every path a series names in its diff headers (both sides of renames), as bytes."""
    paths: set[str] = set()
    for mail in mails:
        for line in mail.data.split(b"\n"):
            if not line.startswith(_TOUCH):
                continue
            if line.startswith(b"diff --git "):
                paths.update(patchfile.header_paths(line))
            else:
                path = patchfile.line_path(line)
                if path is not None:
                    paths.add(path)
    return {p.encode("utf-8", "surrogateescape") for p in paths}


def ls_tree_args(tree: str) -> list[str]:
    """ls-tree arguments listing every entry of a tree, NUL-terminated."""
    return ["ls-tree", "-r", "-z", "--full-tree", tree]


def entries_for(listing: bytes, paths: set[bytes]) -> dict[bytes, bytes]:
    """path -> `mode type oid` from `ls-tree -r -z` output, for the given paths only."""
    # A split and partition beat one regex over a 20,000-entry listing by ~20 ms, a tenth of a
    # `flagbot patch` run (benchmarks/RESULTS.md).
    out: dict[bytes, bytes] = {}
    for entry in listing.split(b"\0"):
        meta, _, path = entry.partition(b"\t")
        if path in paths:
            out[path] = meta
    return out


def apply_partial(gd: GitDir, base_entries: dict[bytes, bytes],
                  mails: list[Mail]) -> list[MailResult]:
    """Apply every mail to an index holding only BASE's entries for the touched paths.

    A partial index keeps a 20,000-file repository's check to the ~150 files a vendor patch
    touches: apply only ever reads the index entries of the paths in the diff headers.
    """
    gd.index.unlink(missing_ok=True)
    gd.run(["update-index", "-z", "--index-info"],
           stdin=b"".join(m + b"\t" + p + b"\0" for p, m in sorted(base_entries.items())))
    results: list[MailResult] = []
    msg_file, patch_file = gd.tmp / "am-msg", gd.tmp / "am-patch"
    for number, mail in enumerate(mails, start=1):
        info = parse_info(gd.run([*MAILINFO, str(msg_file), str(patch_file)],
                                 stdin=mail.data).stdout)
        if not patch_file.stat().st_size:
            raise ApplyFailed(number, mail.line, "", "the mail has no diff")
        proc = gd.run(["apply", "--cached", str(patch_file)], check=False)
        if proc.returncode != 0:
            raise _failure(number, mail, proc.stderr)
        results.append(MailResult(mail, info, am_message(info.get("Subject", ""),
                                                         msg_file.read_bytes())))
    return results


def changes_args(base: str, cur: str, hardwares: str) -> list[str]:
    """diff-tree arguments for what BASE..CUR changed outside hardwares/."""
    return ["diff-tree", "-r", "--no-renames", "-z", base, cur, "--",
            f":(exclude,top,literal){hardwares}"]


def partial_differences(gd: GitDir, base_entries: dict[bytes, bytes], changes: bytes) -> list[str]:
    """Paths where BASE + patch (the partial index) differs from CUR, hardwares/ ignored.

    Expected: BASE's entry for every touched path, overridden by CUR's for every path that
    BASE..CUR changed; a changed path the patch did not touch shows up as a difference.
    """
    want = dict(base_entries)
    raw = changes.split(b"\0")
    for i in range(0, len(raw) - 1, 2):
        _old_mode, mode, _old, oid, _status = raw[i].lstrip(b":").split(b" ")
        want.pop(raw[i + 1], None)
        if oid.strip(b"0"):
            want[raw[i + 1]] = b" ".join((mode, b"commit" if mode == b"160000" else b"blob", oid))
    got: dict[bytes, bytes] = {}
    for record in gd.run(["ls-files", "-s", "-z"]).stdout.split(b"\0"):
        if record:
            meta, _, path = record.partition(b"\t")
            mode, oid, _stage = meta.split(b" ")
            got[path] = b" ".join((mode, b"commit" if mode == b"160000" else b"blob", oid))
    return sorted(p.decode("utf-8", "surrogateescape") for p in set(want) | set(got)
                  if want.get(p) != got.get(p))


_DATE = re.compile(r"(?:[A-Za-z]{3}, )?(\d{1,2}) ([A-Z][a-z]{2}) (\d{4}) (\d\d):(\d\d):(\d\d) "
                   r"([+-])(\d\d)(\d\d)")
_MONTHS = {m: i for i, m in enumerate(
    ("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec").split(), start=1)}


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm)."""
    year -= month <= 2
    era = year // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468


def mail_date(text: str) -> str | None:
    """`epoch tz` of a format-patch Date header (what git records), or None if not that form."""
    match = _DATE.fullmatch(text.strip())
    if not match or match.group(2) not in _MONTHS:
        return None
    day, mon, year, hh, mm, ss, sign, tzh, tzm = match.groups()
    offset = (int(tzh) * 3600 + int(tzm) * 60) * (-1 if sign == "-" else 1)
    epoch = (_days_from_civil(int(year), _MONTHS[mon], int(day)) * 86400
             + int(hh) * 3600 + int(mm) * 60 + int(ss) - offset)
    return f"{epoch} {sign}{tzh}{tzm}"


def am_author(info: dict[str, str]) -> str:
    """`Name <email> epoch tz` as git am records the author from mailinfo output."""
    when = mail_date(info.get("Date", ""))
    if when is None:  # not format-patch's own form: let the email package parse it
        import email.utils

        parsed = email.utils.parsedate_tz(info.get("Date", ""))
        if parsed is None:
            when = "(unparsable date)"
        else:
            offset = parsed[9] or 0
            sign = "-" if offset < 0 else "+"
            when = (f"{email.utils.mktime_tz(parsed)} "
                    f"{sign}{abs(offset) // 3600:02d}{abs(offset) % 3600 // 60:02d}")
    return f"{info.get('Author', '')} <{info.get('Email', '')}> {when}"


def post_image_mismatches(gd: GitDir, applied: list[Applied], base: str) -> list[str]:
    """Files whose blob after applying differs from the id the mail's index line promises."""
    problems: list[str] = []
    parent = base
    for step in applied:
        raw = gd.run(["diff-tree", "-r", "--no-renames", "-z", parent, step.commit]).stdout
        parts = raw.split(b"\0")
        actual: dict[str, str] = {}
        for i in range(0, len(parts) - 1, 2):
            fields = parts[i].decode().split()
            actual[parts[i + 1].decode("utf-8", "surrogateescape")] = fields[3]
        for path, _old, new in patchfile.index_lines(step.mail.data):
            got = actual.get(path)
            if got is not None and not got.startswith(new):
                problems.append(f"{path}: index line says {new}, applying gives {got[:len(new)]}")
        parent = step.commit
    return problems
