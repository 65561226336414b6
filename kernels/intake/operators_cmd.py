"""`flagbot kernels import --input selected.json --batch N --payloads DIR`: the command side.

Checks the environment (torch, a GPU for --remeasure, FlagGems for a batch 1 remeasure),
runs the import and prints one line per operator. `import PATH` (a backend folder, the old
meaning) is forwarded to `import-backend` with a note.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from typing import Any

from flagbot.exit_codes import EXIT_CHECK_FAILED as EXIT_FAILED
from flagbot.exit_codes import EXIT_OK, EXIT_USAGE
from flagbot.kernels.intake import select as selection
from flagbot.kernels.intake.checks import Outcome, Plan, Settings
from flagbot.kernels.intake.operators import ImportUsageError, read_selection, run
from flagbot.kernels.intake.perfdata import Config


def _error(message: str) -> int:
    print(f"flagbot kernels import: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def remeasure_problem(batch: int) -> str | None:
    """Why --remeasure cannot run here, or None."""

    from flagbot.kernels.backend_utils import interpreted
    from flagbot.kernels.device import default_device

    if default_device()[0].type == "cpu" or interpreted():
        return ("--remeasure needs an accelerator torch knows (CUDA, or a vendor's device "
                "through its torch plugin) and compiled kernels (none here, or "
                "TRITON_INTERPRET=1); run it on a device runner, or drop --remeasure to use "
                "the supplied times")
    if batch == 1 and importlib.util.find_spec("flag_gems") is None:
        return ("--remeasure with --batch 1 times FlagGems as the baseline, but flag_gems is "
                "not installed here; install FlagGems or drop --remeasure")
    return None


def rejudger(selected: dict[str, Any]) -> Any:
    """Judge remeasured times by the same rule the selection used."""
    batch = int(selected.get("batch", 2))
    crit = selection.criterion(batch, selected.get("threshold"), selected.get("min_config_speed"))

    def rejudge(plan: Plan, outcome: Outcome) -> tuple[dict[str, Any] | None, str]:
        timing = outcome.timing or {}
        if timing.get("status") != "measured":
            return None, f"remeasure failed: {timing.get('error', 'no timing')}"
        configs = [Config(shape=tuple(c["shape"]) if not isinstance(c["shape"][0], list)
                          else tuple(tuple(s) for s in c["shape"]), dtype=c["dtype"],
                          your_time=c.get("your_time"), cuda_time=c.get("cuda_time"),
                          flaggems_time=c.get("flaggems_time")) for c in timing["configs"]]
        entry, reason = selection.judge(plan.name, configs, crit)
        return entry, f"remeasured on this GPU: {reason}" if entry is None else ""

    return rejudge


def _dest(args: argparse.Namespace, cwd: Path) -> Path | None:
    if args.dest:
        return Path(cwd, args.dest)
    if not (cwd / "kernels" / "registry.py").is_file():
        return None
    return cwd / "kernels" / "experimental"


def import_main(args: argparse.Namespace, cwd: Path) -> int:
    """Run the import; 0 all selected taken in, 1 some rejected, 2 usage/environment."""
    if args.legacy_source:
        from flagbot.kernels.intake.backend_folder import import_backend

        print("flagbot kernels import PATH: copying a backend folder is "
              "`flagbot kernels import-backend PATH` now; doing that", file=sys.stderr)
        return import_backend(cwd / args.legacy_source, cwd / (args.dest or "backends"))
    missing = [f for f, v in (("--input", args.input), ("--batch", args.batch),
                              ("--payloads", args.payloads)) if v is None]
    if missing:
        return _error(f"{', '.join(missing)} required (flagbot kernels import --input "
                      "selected.json --batch 1|2 --payloads DIR)")
    if args.timeout <= 0:
        return _error("--timeout must be positive")
    dest = _dest(args, cwd)
    if dest is None:
        return _error(f"{cwd} is not a flagbot checkout (no kernels/registry.py); run from "
                      "one (or flagbot -C PATH) or pass --dest")
    if args.remeasure and (problem := remeasure_problem(args.batch)):
        return _error(problem)
    try:
        selected = read_selection(cwd / args.input, args.batch)
        settings = Settings(timeout=args.timeout, remeasure=args.remeasure, batch=args.batch,
                            sandbox=not args.no_sandbox)
        report = run(selected, cwd / args.payloads, dest, settings, replace=args.replace,
                     dry_run=args.dry_run,
                     rejudge=rejudger(selected) if args.remeasure else None)
    except ImportUsageError as exc:
        return _error(str(exc))
    except OSError as exc:
        return _error(f"{exc}; nothing was changed under {dest}")
    for name, reason in sorted(report.rejected.items()):
        print(f"rejected {name}: {reason}")
    verb = "would write" if args.dry_run else "wrote"
    for rel in report.written:
        print(f"{verb} {dest / rel}")
    done = "checked (dry run, nothing written)" if args.dry_run else "imported"
    print(f"{done} {len(report.imported)} of {len(selected['operators'])} selected operators"
          + (f"; next: flagbot kernels check --backend {dest}" if report.imported and
             not args.dry_run else ""))
    return EXIT_FAILED if report.rejected else EXIT_OK
