"""`flagbot kernels check|import-backend|validate|filter|import`: exit 0 ok, 1 a gate or check
failed, 2 usage or environment error."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from flagbot.exit_codes import EXIT_CHECK_FAILED as EXIT_FAILED
from flagbot.exit_codes import EXIT_OK, EXIT_USAGE
from flagbot.kernels.intake import commands as generated

if TYPE_CHECKING:  # torch-importing modules load only when a command needs them
    from flagbot.kernels.check import CheckOptions
    from flagbot.kernels.loader import Backend

DTYPES = {"float32": "float32", "fp32": "float32", "float16": "float16", "fp16": "float16",
          "half": "float16", "bfloat16": "bfloat16", "bf16": "bfloat16"}


def prepare_environment(device: str | None = None) -> None:
    """Without an accelerator (or with `--device cpu`), run kernels on Triton's interpreter
    (must precede any @jit)."""
    import torch

    accelerator = getattr(torch, "accelerator", None)
    # torch before 2.6 has no accelerator API: only CUDA can be asked for there.
    present = accelerator.is_available() if accelerator is not None else \
        torch.cuda.is_available()
    if not present or (device or "").split(":")[0] == "cpu":
        os.environ.setdefault("TRITON_INTERPRET", "1")
    # The interpreter evaluates masked-off lanes too (numpy warns about their -inf - -inf);
    # those lanes are never stored, so the warnings are noise to a vendor reading the log.
    warnings.filterwarnings("ignore", category=RuntimeWarning, module="triton.runtime.interpreter")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="flagbot kernels", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="accuracy, performance and gates of a backend's ops")
    check.add_argument("--backend", required=True, help="backend folder, e.g. backends/_nvidia")
    check.add_argument("--arch", help="architecture folder to check with the vendor's ops: an "
                                      "ARCH_MAP key (9) or folder (hopper); default the one "
                                      "FlagGems picks for this device")
    check.add_argument("--flaggems", help="FlagGems checkout or package the backend's code "
                                          "imports (default: the tree the backend sits in)")
    check.add_argument("--ops", help="comma-separated op names (generic or aten); default all")
    check.add_argument("--dtypes", help="comma-separated: float32,float16,bfloat16 (fp32...)")
    check.add_argument("--shapes", default="auto",
                       help="ci = tiny (CPU), full = device sizes; auto = full on a GPU; "
                            "random[:N] = N seeded random shapes per op (default 200)")
    check.add_argument("--seed", type=int, help="seed of --shapes random (default: a new one, "
                                                "printed)")
    check.add_argument("--seeds", type=int, default=3, help="random inputs per case (default 3)")
    check.add_argument("--json", help="write the report (schema flagbot.kernels.report/2)")
    check.add_argument("--markdown", help="write the PR-comment table")
    check.add_argument("--min-speedup", type=float, default=1.30,
                       help="override gate: speedup vs the generic kernel (default 1.30)")
    check.add_argument("--min-native-fraction", type=float, default=0.80,
                       help="new-op gate: speed as a fraction of torch native (default 0.80)")
    check.add_argument("--min-spread", type=float, default=0.02,
                       help="smallest +- band around a speedup for the near verdict (0.02)")
    check.add_argument("--strict", action="store_true", help="a near-threshold verdict fails")
    check.add_argument("--baseline", choices=("auto", "flaggems", "generic"), default="auto",
                       help="what an override is gated against: FlagGems' own op, the bundled "
                            "generic kernel, or auto = FlagGems when flag_gems imports (default)")
    check.add_argument("--device", help="torch device to run on (cuda, npu:1, mlu, musa, cpu); "
                                        "default the one FlagGems' runtime or torch's "
                                        "accelerator API reports")
    check.add_argument("--compare-to", metavar="REF",
                       help="also check the backend folder as it was at git revision REF, in "
                            "this process, timed interleaved; a regression exits 1")
    check.add_argument("--compare-tolerance", type=float, default=0.05,
                       help="--compare-to: slower than REF by more than this fraction, outside "
                            "the noise band, is a regression (default 0.05)")
    exp = check.add_mutually_exclusive_group()
    exp.add_argument("--expected", metavar="FILE",
                     help="CSV of expected per-case times; outside its margin fails "
                          "(REGRESSION / UNEXPECTED WIN)")
    exp.add_argument("--write-expected", metavar="FILE",
                     help="write the regenerated expectations CSV (rows within a third of "
                          "their margin kept as they were)")
    check.add_argument("--plot", metavar="DIR", help="write one PNG per op (speed by shape)")
    check.add_argument("--min-fraction-of-copy", type=float, default=None,
                       help="fail an op whose memory-bound cases reach less than this fraction "
                            "of the device's copy bandwidth (default off)")
    check.add_argument("--runtime-graphs", action="store_true",
                       help="the vendor's runtime replays CUDA graphs: gate short kernels on "
                            "device time instead of launch-inclusive time")
    check.add_argument("--wait-for-device", type=float, default=600.0, metavar="SECONDS",
                       help="how long to wait for a busy device before reporting 'device "
                            "busy' (default 600)")
    imp = sub.add_parser("import-backend", help="copy a FlagGems-layout backend folder into backends/")
    imp.add_argument("source", help="a _<vendor> folder (FlagGems runtime/backend/_<vendor>)")
    imp.add_argument("--dest", default="backends", help="where backends live (default backends)")
    generated.add_parsers(sub)
    return parser


def _resolve(path: str, cwd: str | None) -> Path:
    return Path(cwd or os.getcwd()) / path


def _options(args: argparse.Namespace) -> object:
    import torch

    from flagbot.kernels.check import CheckOptions, can_measure
    from flagbot.kernels.gates import Thresholds

    dtypes = None
    if args.dtypes:
        names = [n.strip() for n in args.dtypes.split(",") if n.strip()]
        unknown = [n for n in names if n not in DTYPES]
        if unknown:
            raise ValueError(f"--dtypes: unknown {unknown}; use {', '.join(sorted(set(DTYPES)))}")
        dtypes = [getattr(torch, DTYPES[n]) for n in names]
    if args.seeds < 1:
        raise ValueError("--seeds must be at least 1")
    if min(args.min_speedup, args.min_native_fraction) <= 0 or args.min_spread < 0:
        raise ValueError("thresholds must be positive (and --min-spread not negative)")
    if not 0 <= args.compare_tolerance < 1 or args.wait_for_device < 0 or \
            (args.min_fraction_of_copy is not None and not 0 < args.min_fraction_of_copy <= 1):
        raise ValueError("--compare-tolerance must be in [0, 1), --min-fraction-of-copy in "
                         "(0, 1], --wait-for-device not negative")
    shapes = args.shapes if args.shapes != "auto" else ("full" if can_measure() else "ci")
    if shapes.startswith("random"):
        from flagbot.kernels import random_shapes

        seed = args.seed if args.seed is not None else random_shapes.new_seed()
        shapes = f"random:{random_shapes.parse_spec(shapes)}:{seed}"
        print(f"flagbot kernels: random shapes, seed {seed} (--seed {seed} repeats them)",
              file=sys.stderr)
    elif shapes not in ("ci", "full"):
        raise ValueError(f"--shapes {shapes!r}: use ci, full, auto, random or random:N")
    elif args.seed is not None:
        raise ValueError("--seed goes with --shapes random")
    return CheckOptions(
        shapes=shapes, ops=[o.strip() for o in args.ops.split(",")] if args.ops else None,
        dtypes=dtypes, seeds=tuple(range(args.seeds)),
        thresholds=Thresholds(args.min_speedup, args.min_native_fraction, args.min_spread,
                              args.min_fraction_of_copy, args.compare_tolerance),
        near_fails=args.strict, baseline=args.baseline, device=args.device,
        runtime_graphs=args.runtime_graphs, wait_s=args.wait_for_device)


# Runs the interpreter would take longer than this get a warning before they start.
SLOW_RUN_S = 60.0


def warn_if_slow(backend: Backend, options: CheckOptions) -> None:
    """Before a run on Triton's CPU interpreter that will take minutes, say so and how long."""
    from flagbot.kernels.backend_utils import interpreted
    from flagbot.kernels.check import interpreter_estimate, select
    from flagbot.kernels.progress import duration

    if not interpreted():
        return
    seconds = interpreter_estimate(select(backend, options.ops), options)
    if seconds >= SLOW_RUN_S:
        print(f"flagbot kernels: warning: no GPU, so kernels run on Triton's CPU interpreter: "
              f"shapes {options.shapes!r} will take about {duration(seconds)} "
              "(--shapes ci takes seconds; progress follows on stderr)", file=sys.stderr)


def run_check(args: argparse.Namespace, argv: Sequence[str], cwd: str | None) -> int:
    """Load, check, report; the exit code follows the verdicts."""
    from flagbot.kernels import report
    from flagbot.kernels.baseline import BaselineUnavailable, resolve
    from flagbot.kernels.check import CheckOptions
    from flagbot.kernels.check import run_check as check
    from flagbot.kernels.compare import CompareError
    from flagbot.kernels.device import DeviceUnavailable
    from flagbot.kernels.device import resolve as resolve_device
    from flagbot.kernels.expected import ExpectedError
    from flagbot.kernels.loader import BackendLoadError, BackendMissing, load_backend
    from flagbot.kernels.outputs import Outputs

    try:
        options = _options(args)
        assert isinstance(options, CheckOptions)
        baseline = resolve(options.baseline)
        device = resolve_device(options.device)
        outputs = Outputs.from_args(args, cwd)
    except (ValueError, BaselineUnavailable, DeviceUnavailable, ExpectedError) as exc:
        print(f"flagbot kernels: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    path = _resolve(args.backend, cwd)
    result = None
    code, error, backend = EXIT_OK, None, None
    try:
        backend = load_backend(path, arch=args.arch, flaggems=args.flaggems and
                               _resolve(args.flaggems, cwd))
        warn_if_slow(backend, options)
        with outputs.base(backend, args.compare_to, args.arch) as (base, ref):
            result = check(backend, options, baseline, progress=True, device=device, base=base,
                           ref=ref)
        code = outputs.judge(result.entries, result.exit_code)
    except (BackendMissing, CompareError, ExpectedError) as exc:
        error, code = str(exc), EXIT_USAGE
    except BackendLoadError as exc:
        error, code = str(exc), EXIT_FAILED
    doc = report.build(argv, options, report.backend_info(backend, str(path), error),
                       result.entries if result else [], code, baseline.to_json(),
                       device=device, result=result)
    try:
        outputs.write(doc)
    except (OSError, ImportError, ExpectedError) as exc:
        print(f"flagbot kernels: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    table = report.markdown(doc)
    if error:  # no table of nothing: the error is the whole answer
        print(f"flagbot kernels: error: {error}", file=sys.stderr)
    else:
        print(table, end="")
    if args.json:
        report.write_json(doc, _resolve(args.json, cwd))
    if args.markdown:
        target = _resolve(args.markdown, cwd)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(table, encoding="utf-8")
    return code


def main(argv: Sequence[str] | None = None, *, cwd: str | None = None) -> int:
    """Entry point of `flagbot kernels` and `python -m flagbot.kernels`."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        args = _parser().parse_args(args_list)
    except SystemExit as exc:  # argparse: --help exits 0, bad flags exit 2
        return int(exc.code or 0)
    if args.command in generated.COMMANDS:  # validate and filter never import torch
        if args.command == "import":
            prepare_environment()
        return generated.main(args, Path(cwd or os.getcwd()))
    prepare_environment(getattr(args, "device", None))
    if args.command == "import-backend":
        from flagbot.kernels.intake.backend_folder import import_backend

        return import_backend(_resolve(args.source, cwd), _resolve(args.dest, cwd))
    return run_check(args, ["kernels", *args_list], cwd)
