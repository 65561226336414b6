"""`flagbot check-routing` / the `check-routing` hook: PyTorch-plugin routing configs.

A routing file (`backends.conf`) has one `op = backend` per line, `#` comments and
`include other.conf` lines (relative to the including file); the last assignment of an op
wins. Checked: syntax, backend names against a known set, op names against ATen, missing
includes and include cycles (errors), an op assigned twice in one file (a warning).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from flagbot.hooks import aten_ops
from flagbot.hooks.backend.discover import vendor_folders
from flagbot.hooks.findings import ERROR, WARNING, Finding, has_errors, render_json, render_text
from flagbot.hooks.folders import configured_folder
from flagbot.hooks.hookmain import guarded

WHAT = "check-routing"
# Backends every plugin has; vendor names found under the backends root are added to these.
GENERIC_BACKENDS = ("flaggems", "native", "torch")

RULES: dict[str, tuple[str, str]] = {
    "routing-syntax": (ERROR, "every line is `op = backend`, `include FILE`, blank or a comment"),
    "routing-unknown-backend": (ERROR, "backend names are in the known set"),
    "routing-aten-name": (ERROR, "op names are ATen operators (op or op.overload)"),
    "routing-include-missing": (ERROR, "included files exist"),
    "routing-include-cycle": (ERROR, "no file includes itself, directly or not"),
    "routing-duplicate-op": (WARNING, "an op is assigned once per file (the last one wins)"),
}

_ASSIGN = re.compile(r"^([A-Za-z_][\w:.]*)\s*=\s*([A-Za-z_][\w.-]*)$")
_INCLUDE = re.compile(r"^include\s+(\"[^\"]+\"|'[^']+'|\S+)$")


@dataclass
class RoutingFile:
    """One parsed file: assignments (line, op, backend) and includes (line, target)."""

    path: Path
    assignments: list[tuple[int, str, str]] = field(default_factory=list)
    includes: list[tuple[int, Path]] = field(default_factory=list)
    errors: list[tuple[int, str]] = field(default_factory=list)


def parse(path: Path, text: str) -> RoutingFile:
    """Parse routing text; malformed lines become `errors`, never exceptions."""
    out = RoutingFile(path)
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        include = _INCLUDE.match(line)
        if include:
            out.includes.append((number, path.parent / include.group(1).strip("\"'")))
            continue
        assign = _ASSIGN.match(line)
        if assign:
            out.assignments.append((number, assign.group(1), assign.group(2)))
        else:
            out.errors.append((number, f"cannot read {line!r}; expected `op = backend` or "
                                       "`include FILE`"))
    return out


@dataclass
class Checker:
    """Walks files and their includes once each, collecting findings."""

    repo: Path
    backends: frozenset[str]
    findings: list[Finding] = field(default_factory=list)
    parsed: dict[Path, RoutingFile | None] = field(default_factory=dict)

    def add(self, rule: str, path: Path, line: int, message: str) -> None:
        try:
            rel = path.resolve().relative_to(self.repo).as_posix()
        except ValueError:
            rel = path.as_posix()
        self.findings.append(Finding(rel, line, RULES[rule][0], rule, message))

    def load(self, path: Path) -> RoutingFile | None:
        key = path.resolve()
        if key not in self.parsed:
            try:
                text = key.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                self.parsed[key] = None
            else:
                self.parsed[key] = parsed = parse(path, text)
                self.check_lines(parsed)
        return self.parsed[key]

    def check_lines(self, rf: RoutingFile) -> None:
        for line, message in rf.errors:
            self.add("routing-syntax", rf.path, line, message)
        first: dict[str, int] = {}
        for line, op, backend in rf.assignments:
            if op in first:
                self.add("routing-duplicate-op", rf.path, line, f"{op} is assigned again (first "
                         f"at line {first[op]}); only this last assignment counts")
            first.setdefault(op, line)
            if not aten_ops.is_aten_op(op, allow_base=True):
                hint = ", ".join(aten_ops.suggest(op)) or "see torch.ops.aten"
                self.add("routing-aten-name", rf.path, line, f"{op!r} is not an aten operator; "
                         f"did you mean: {hint}")
            if backend not in self.backends:
                self.add("routing-unknown-backend", rf.path, line, f"unknown backend {backend!r} "
                         f"(known: {', '.join(sorted(self.backends))}); fix the name or pass "
                         "--backends")

    def walk(self, path: Path, stack: tuple[Path, ...] = ()) -> None:
        """Check `path` and, depth first, what it includes; `stack` is the include chain."""
        rf = self.load(path)
        if rf is None:
            return
        for line, target in rf.includes:
            key = target.resolve()
            if key in stack or key == path.resolve():
                chain = " -> ".join(p.name for p in (*stack, path.resolve(), key))
                self.add("routing-include-cycle", path, line, f"include cycle: {chain}; remove "
                         "one include")
            elif not key.is_file():
                self.add("routing-include-missing", path, line, f"includes {target.name}, which "
                         "does not exist")
            else:
                self.walk(target, (*stack, path.resolve()))


def known_backends(repo: Path) -> frozenset[str]:
    """The generic backends plus every vendor folder name under the configured backends root."""
    root = repo / configured_folder(repo, "backends", option="--backends NAMES")
    return frozenset(GENERIC_BACKENDS) | {p.name[1:] for p in vendor_folders(root)}


def check_routing(repo: Path, files: Sequence[str], *, backends: Sequence[str] | None = None) -> list[Finding]:
    """Findings for routing `files` (repo-relative) and everything they include."""
    repo = repo.resolve()
    checker = Checker(repo, frozenset(backends) if backends else known_backends(repo))
    for name in files:
        path = repo / name
        if not path.is_file():
            checker.add("routing-include-missing", path, 0, "no such routing file")
            continue
        checker.walk(path)
    # one finding per place: a file reached through two includes is reported once
    return sorted(set(checker.findings))


def _run(argv: Sequence[str] | None, cwd: str | None) -> int:
    parser = argparse.ArgumentParser(prog="flagbot check-routing", description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="*", metavar="FILE", help="routing files (backends.conf)")
    parser.add_argument("--backends", help="comma-separated known backend names (default: "
                        f"{', '.join(GENERIC_BACKENDS)} + the vendor folders under the backends root)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    args = parser.parse_args(argv)
    repo = Path(cwd or ".").resolve()
    backends = [b.strip() for b in args.backends.split(",") if b.strip()] if args.backends else None
    findings = check_routing(repo, args.files, backends=backends)
    if args.format == "json":
        print(render_json(findings, WHAT, checked=len(args.files)))
    elif findings or args.files:
        print(render_text(findings, f"{WHAT}: {len(args.files)} file(s)"))
    return 1 if has_errors(findings) else 0


def main(argv: Sequence[str] | None = None, *, cwd: str | None = None) -> int:
    """Check routing files; 0 clean (warnings allowed), 1 errors found, 2 usage."""
    return guarded(_run, argv, cwd, "flagbot check-routing")


if __name__ == "__main__":
    raise SystemExit(main())
