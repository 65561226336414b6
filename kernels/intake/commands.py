"""`flagbot kernels validate | filter | import`: the generated-operator pipeline's commands.

validate and filter are pure data work and never import torch; import needs torch and triton.
Exit 0 ok, 1 a check failed (bad data, a rejected operator), 2 usage or environment error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from flagbot.exit_codes import EXIT_CHECK_FAILED as EXIT_FAILED
from flagbot.exit_codes import EXIT_OK, EXIT_USAGE
from flagbot.kernels.intake import perfdata
from flagbot.kernels.intake import select as selection

COMMANDS = ("validate", "filter", "import")


def _data_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--your-data", required=True,
                        help="timings of the generated kernels (ms): your_time, cuda_time")
    parser.add_argument("--flaggems-data", help="timings of the existing kernels: flaggems_time")


def add_parsers(sub: Any) -> None:
    """Add the three subcommands to `flagbot kernels`' subparsers."""
    val = sub.add_parser("validate", help="check generated-operator timing files (no torch)")
    _data_flags(val)
    val.add_argument("--output", help="write the findings and the merged data as JSON")
    flt = sub.add_parser("filter", help="select generated operators by measured speed (no torch)")
    _data_flags(flt)
    flt.add_argument("--batch", type=int, choices=(1, 2), required=True,
                     help="1: operators the library has (vs flaggems_time); 2: new (vs cuda_time)")
    flt.add_argument("--output", required=True, help="where to write the selection JSON")
    flt.add_argument("--threshold", type=float,
                     help="batch 1: min geomean speedup (1.30); batch 2: max geomean relative "
                          "time (1.25)")
    flt.add_argument("--min-config-speed", type=float,
                     help="floor on every config's speed vs the baseline (batch 1: 1.0, "
                          "batch 2: 0.5)")
    imp = sub.add_parser("import", help="check selected generated operators, take them into "
                                        "kernels/experimental/")
    imp.add_argument("legacy_source", nargs="?", help=argparse.SUPPRESS)
    imp.add_argument("--input", help="the selection written by `flagbot kernels filter`")
    imp.add_argument("--batch", type=int, choices=(1, 2), help="the selection's batch")
    imp.add_argument("--payloads", help="folder of payloads, one <op>.json per operator")
    imp.add_argument("--dest", help="default kernels/experimental of the checkout (cwd or -C)")
    imp.add_argument("--replace", action="store_true", help="import an imported name again")
    imp.add_argument("--dry-run", action="store_true",
                     help="run every check, list the files it would write, write nothing")
    imp.add_argument("--remeasure", action="store_true",
                     help="time each operator on this GPU instead of trusting the given times")
    imp.add_argument("--timeout", type=float, default=300.0,
                     help="seconds allowed to each child step (import+accuracy, pytest)")
    imp.add_argument("--no-sandbox", action="store_true",
                     help="UNSAFE: run the generated code as plain processes of your user "
                          "where bubblewrap is unavailable (only for payloads you trust)")


def _validation(args: argparse.Namespace, cwd: Path) -> perfdata.Validation:
    flaggems = cwd / args.flaggems_data if args.flaggems_data else None
    return perfdata.validate(cwd / args.your_data, flaggems)


def _print_findings(result: perfdata.Validation, command: str) -> None:
    for line in perfdata.lines("error", result.errors):
        print(f"flagbot kernels {command}: {line}", file=sys.stderr)
    for line in perfdata.lines("warning", result.warnings):
        print(f"flagbot kernels {command}: {line}", file=sys.stderr)


def _write(path: Path, doc: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2, sort_keys=False) + "\n", encoding="utf-8")


def validate_main(args: argparse.Namespace, cwd: Path) -> int:
    """Check the timing files; 1 when any error was found."""
    result = _validation(args, cwd)
    _print_findings(result, "validate")
    print(perfdata.summary(result))
    if args.output:
        _write(cwd / args.output, {
            "errors": result.errors, "warnings": result.warnings, "matched": result.matched,
            "operators": {op: {"configs": [c.to_json() for c in configs]}
                          for op, configs in result.ops.items()}})
    if result.errors:
        print("validation failed: fix the errors above, then run again", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def filter_main(args: argparse.Namespace, cwd: Path) -> int:
    """Validate, then select; the selection file lists selected and rejected operators."""
    for value in (args.threshold, args.min_config_speed):
        if value is not None and value <= 0:
            print("flagbot kernels filter: error: --threshold and --min-config-speed must be "
                  "positive", file=sys.stderr)
            return EXIT_USAGE
    result = _validation(args, cwd)
    _print_findings(result, "filter")
    if result.errors:
        print("filter: the data has errors (run `flagbot kernels validate`); nothing written",
              file=sys.stderr)
        return EXIT_FAILED
    crit = selection.criterion(args.batch, args.threshold, args.min_config_speed)
    doc = selection.select(result, crit)
    doc["inputs"] = {"your_data": args.your_data, "flaggems_data": args.flaggems_data}
    _write(cwd / args.output, doc)
    for op, reason in doc["rejected"].items():
        print(f"rejected {op}: {reason}")
    print(f"selected {doc['total_operators']} of {len(result.ops)} operators "
          f"({doc['total_configs']} configs) for batch {args.batch}: {crit.describe()}; "
          f"wrote {args.output}")
    return EXIT_OK


def main(args: argparse.Namespace, cwd: Path) -> int:
    """Run one of COMMANDS; a data file that cannot be read at all is a usage error."""
    try:
        if args.command == "validate":
            return validate_main(args, cwd)
        if args.command == "filter":
            return filter_main(args, cwd)
    except perfdata.BadJson as exc:
        print(f"flagbot kernels {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except perfdata.DataError as exc:
        print(f"flagbot kernels {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    from flagbot.kernels.intake.operators_cmd import import_main

    return import_main(args, cwd)
