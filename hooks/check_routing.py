"""`flagbot check-routing` / the `check-routing` hook: PyTorch-plugin routing configs.

A routing file (`backends.conf`) is read the way the FlagOS plugin reads it: `#` starts a
comment anywhere on a line; a line with `=` is `op = backend` (split at the first `=`); a line
without one is `include PATH` (relative to the including file, taken literally) or silently
skipped; the last assignment of an op wins. What the plugin does silently becomes a finding:
an unknown backend (it runs the op on flagos), a skipped line, an include it cannot open or
nests too deep. Op names are checked against the ATen schemas of several torch releases and,
when the plugin's C++ sources are in the repository, against the kernels registered per backend.
The releases are those the repository's own torch requirement admits when it declares one
(hooks/torch_pin.py), else every release flagbot ships data for.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from flagbot.hooks import aten_ops, git, since
from flagbot.hooks.backend.discover import vendor_folders
from flagbot.hooks.errors import UsageError
from flagbot.hooks.findings import ERROR, WARNING, Finding, has_errors, render_json, render_text
from flagbot.hooks.folders import configured_folder, repo_config
from flagbot.hooks.hookmain import guarded, require_files
from flagbot.hooks.plugin_kernels import KernelIndex, read_index
from flagbot.hooks.torch_pin import Pin, declared_pin

WHAT = "check-routing"
BACKENDS_DATA = Path(__file__).resolve().parent / "data" / "routing_backends.txt"
# The plugin stops following includes deeper than this (its ParseConfigInto `depth > 8`).
MAX_INCLUDE_DEPTH = 8

RULES: dict[str, tuple[str, str]] = {
    "routing-syntax": (WARNING, "every line is `op = backend`, `include PATH`, blank or a comment "
                                "(the plugin silently skips any other line)"),
    "routing-unknown-backend": (ERROR, "backend names are ones the plugin accepts (an unknown one "
                                       "silently runs the op on flagos)"),
    "routing-aten-name": (ERROR, "op names are ATen operators as the plugin looks them up (op or "
                                 "op.overload, no aten:: prefix)"),
    "routing-aten-release": (WARNING, "the op exists in every torch release the repository "
                                      "supports (its own torch pin, else the shipped range)"),
    "routing-no-kernel": (WARNING, "the plugin's sources register a kernel for the op on that backend"),
    "routing-include-missing": (ERROR, "included files exist"),
    "routing-include-cycle": (ERROR, "no file includes itself, directly or not"),
    "routing-include-depth": (ERROR, f"includes nest at most {MAX_INCLUDE_DEPTH} deep (the plugin "
                                     "skips deeper ones)"),
    "routing-duplicate-op": (WARNING, "an op is assigned once per file (the last one wins)"),
}


def plugin_backends() -> dict[str, str]:
    """Backend name -> `Backend` enum value, as the plugin's parser accepts them (shipped data)."""
    out: dict[str, str] = {}
    for line in BACKENDS_DATA.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, enum = line.split()
            out[name] = enum
    return out


def enum_name(backend: str) -> str:
    """The `Backend` enum value a new backend would get (`my_npu` -> `kMyNpu`)."""
    return "k" + "".join(part.capitalize() for part in backend.split("_"))


@dataclass
class RoutingFile:
    """One parsed file: assignments (line, op, backend), includes (line, target), skipped lines."""

    path: Path
    assignments: list[tuple[int, str, str]] = field(default_factory=list)
    includes: list[tuple[int, str]] = field(default_factory=list)
    skipped: list[tuple[int, str]] = field(default_factory=list)


def parse(path: Path, text: str) -> RoutingFile:
    """Parse routing text as the plugin does; lines it would skip become `skipped`."""
    out = RoutingFile(path)
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0]
        if "=" not in line:
            stripped = line.strip()
            if stripped.startswith("include") and stripped[7:8] in (" ", "\t"):
                out.includes.append((number, stripped[7:].strip()))
            elif stripped:
                out.skipped.append((number, f"{stripped!r} is neither `op = backend` nor "
                                            "`include PATH`; the plugin silently skips it"))
            continue
        op, _, backend = (part.strip() for part in line.partition("="))
        if op and backend:
            out.assignments.append((number, op, backend))
        else:
            out.skipped.append((number, f"{line.strip()!r} has no {'op' if not op else 'backend'}; "
                                        "the plugin silently skips it"))
    return out


@dataclass
class Checker:
    """Walks files and their includes once each, collecting findings."""

    repo: Path
    backends: dict[str, str]  # name -> Backend enum value
    kernels: KernelIndex | None = None
    pin: Pin | None = None  # the repository's own torch requirement, when it declares one
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
        for line, message in rf.skipped:
            self.add("routing-syntax", rf.path, line, message)
        first: dict[str, int] = {}
        for line, op, backend in rf.assignments:
            if op in first:
                self.add("routing-duplicate-op", rf.path, line, f"{op} is assigned again (first "
                         f"at line {first[op]}); only this last assignment counts")
            first.setdefault(op, line)
            self.check_op(rf.path, line, op)
            self.check_backend(rf.path, line, op, backend)

    def check_op(self, path: Path, line: int, op: str) -> None:
        if op.startswith(aten_ops.PREFIX):
            self.add("routing-aten-name", path, line, f"{op!r}: the plugin looks ops up without "
                     f"the {aten_ops.PREFIX} prefix, so this line never matches; write "
                     f"{op[len(aten_ops.PREFIX):]}")
        elif not aten_ops.is_aten_op(op):
            hint = ", ".join(aten_ops.suggest(op)) or "see torch.ops.aten"
            self.add("routing-aten-name", path, line, f"{op!r} is not an aten operator of torch "
                     f"{'/'.join(aten_ops.shipped_releases())}; did you mean: {hint}")
        elif aten_ops.only_in(op):
            have = aten_ops.only_in(op)
            if self.pin is None:
                self.add("routing-aten-release", path, line, f"{op} exists only in torch "
                         f"{', '.join(have)}; with another release the line is dead")
                return
            missing = [r for r in self.pin.releases if r not in have]
            if missing:
                self.add("routing-aten-release", path, line, f"{op} exists only in torch "
                         f"{', '.join(have)}, not in {', '.join(missing)}, which the repository "
                         f"supports ({self.pin.source}); there the line is dead")

    def check_backend(self, path: Path, line: int, op: str, backend: str) -> None:
        enum = self.backends.get(backend)
        if enum is None:
            self.add("routing-unknown-backend", path, line, f"unknown backend {backend!r}: the "
                     f"plugin would silently run {op} on flagos (known: "
                     f"{', '.join(sorted(self.backends))}); fix the name, or add it to "
                     "routing.backends in .github/flagbot.yml")
            return
        have = self.kernels.backends_for(op) if self.kernels is not None else None
        if have is not None and enum not in have:
            self.add("routing-no-kernel", path, line, f"{op} is routed to {backend}, but no "
                     f"REGISTER_IMPL_TO_DISPATCHER(..., Backend::{enum}, ...) serves it (kernels: "
                     f"{', '.join(sorted(have)) or 'none'}); the call fails with "
                     f"\"{op}: backend not registered\"")

    def walk(self, path: Path, stack: tuple[Path, ...] = ()) -> None:
        """Check `path` and, depth first, what it includes; `stack` is the include chain."""
        rf = self.load(path)
        if rf is None:
            return
        here = path.resolve()
        for line, name in rf.includes:
            target = Path(name) if name.startswith("/") else path.parent / name
            key = target.resolve()
            if key in stack or key == here:
                chain = " -> ".join(p.name for p in (*stack, here, key))
                self.add("routing-include-cycle", path, line, f"include cycle: {chain}; remove "
                         "one include")
            elif not key.is_file():
                quoted = " (the plugin takes the path literally: drop the quotes)" \
                    if name[:1] in "\"'" else ""
                self.add("routing-include-missing", path, line, f"includes {name}, which does "
                         f"not exist{quoted}")
            elif len(stack) + 1 > MAX_INCLUDE_DEPTH:
                self.add("routing-include-depth", path, line, f"includes {name} at depth "
                         f"{len(stack) + 1}; the plugin skips includes deeper than "
                         f"{MAX_INCLUDE_DEPTH}, so its ops are silently not routed")
            else:
                self.walk(target, (*stack, here))


def known_backends(repo: Path) -> dict[str, str]:
    """The plugin's backends, `routing.backends` of the config and the vendor folder names."""
    known = plugin_backends()
    config = repo_config(repo, option="--backends NAMES")
    extra = [] if config is None else list(config["routing"]["backends"])
    root = repo / configured_folder(repo, "backends", option="--backends NAMES")
    extra += [p.name[1:] for p in vendor_folders(root)]
    for name in extra:
        known.setdefault(name, enum_name(name))
    return known


def check_routing(repo: Path, files: Sequence[str], *, backends: Sequence[str] | None = None,
                  kernels: bool = True) -> list[Finding]:
    """Findings for routing `files` (repo-relative) and everything they include."""
    repo = repo.resolve()
    names = {b: plugin_backends().get(b, enum_name(b)) for b in backends} if backends \
        else known_backends(repo)
    checker = Checker(repo, names, read_index(repo) if kernels and files else None,
                      declared_pin(repo, aten_ops.shipped_releases()) if files else None)
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
    parser.add_argument("files", nargs="*", metavar="FILE", help="routing files (default: every "
                        "tracked backends*.conf)")
    parser.add_argument("--backends", help="comma-separated backend names, replacing the default "
                        "set (the plugin's, routing.backends of .github/flagbot.yml and the vendor "
                        "folders under the backends root)")
    parser.add_argument("--no-kernels", action="store_true", help="do not read the plugin's C++ "
                        "sources for registered kernels")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    since.add_option(parser)
    args = parser.parse_args(argv)
    repo = Path(cwd or ".").resolve()
    require_files(args.files, repo)
    files = args.files or tracked_routing_files(repo)
    backends = [b.strip() for b in args.backends.split(",") if b.strip()] if args.backends else None

    def check(tree: Path) -> list[Finding]:
        # a file the change adds did not exist then: at REF it is simply not checked
        here = files if tree == repo else [f for f in files if (tree / f).is_file()]
        return check_routing(tree, here, backends=backends, kernels=not args.no_kernels)

    findings, inherited = since.judge(repo, args.since, check(repo), check)
    if not files:  # after the check above, which reads .github/flagbot.yml and reports it broken
        raise UsageError(f"no routing file named, and no tracked backends*.conf under {repo}",
                         hint="flagbot check-routing FILE ...")
    if args.format == "json":
        print(render_json(findings, WHAT, inherited=inherited, checked=len(files),
                          **({"since": args.since} if args.since else {})))
    else:
        print(render_text(findings, f"{WHAT}: {len(files)} file(s)", inherited=inherited,
                          since=args.since or ""))
    return 1 if has_errors(findings) else 0


def tracked_routing_files(repo: Path) -> list[str]:
    """Tracked files the check-routing hook would select (`backends*.conf`), relative to `repo`;
    none outside a git repository."""
    done = git.run(["ls-files", "-z", "--", ":(glob)**/backends*.conf"], cwd=repo, check=False)
    if done.returncode != 0:
        return []
    return sorted(p for p in done.stdout.decode("utf-8", "surrogateescape").split("\0") if p)


def main(argv: Sequence[str] | None = None, *, cwd: str | None = None) -> int:
    """Check routing files; 0 clean (warnings allowed), 1 errors found, 2 usage."""
    return guarded(_run, argv, cwd, "flagbot check-routing")


if __name__ == "__main__":
    raise SystemExit(main())
