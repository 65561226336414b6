"""`kernels import --input selected.json`: check each selected operator, then take in those
that pass, all at once.

Transactional: every check runs in a temporary folder outside the tree; the new state of the
destination (its current files, the accepted operators, the updated index) is assembled in a
second temporary folder and renamed into place, the old folder renamed aside first and back
again if anything fails in between. An interrupted or failing import leaves the destination as
it was; a dry run writes nothing there at all.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flagbot.kernels import bubblewrap
from flagbot.kernels.intake import experimental
from flagbot.kernels.intake.checks import Outcome, Plan, Settings, check
from flagbot.kernels.intake.payload import dumps, load
from flagbot.kernels.intake.perfdata import DataError
from flagbot.kernels.intake.schema import SchemaError, category, resolve

IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc")
CATEGORY_INIT = '"""Imported {} operators; each module and its test are listed in ../_metadata.json."""\n'


class ImportUsageError(Exception):
    """The run cannot start (bad selection file, batch mismatch, missing folder): exit 2."""


@dataclass
class Report:
    """Per operator: imported (with its files) or rejected (with the reason)."""

    imported: dict[str, list[str]] = field(default_factory=dict)
    rejected: dict[str, str] = field(default_factory=dict)
    written: list[str] = field(default_factory=list)


def read_selection(path: Path, batch: int) -> dict[str, Any]:
    """The filter's output, checked for the fields the import uses."""
    from flagbot.kernels.intake.perfdata import read_json
    from flagbot.kernels.intake.select import SCHEMA

    try:
        data = read_json(path, [])
    except DataError as exc:
        raise ImportUsageError(str(exc)) from exc
    if not isinstance(data, dict) or not isinstance(data.get("operators"), dict):
        raise ImportUsageError(f"{path}: not a selection file (write one with "
                               "`flagbot kernels filter --output`)")
    if data.get("schema", SCHEMA) != SCHEMA:
        raise ImportUsageError(f"{path}: schema {data.get('schema')!r}, expected {SCHEMA}")
    if data.get("batch", batch) != batch:
        raise ImportUsageError(f"{path}: selected for batch {data.get('batch')}, but --batch "
                               f"{batch}; filter again or pass --batch {data.get('batch')}")
    return data


def plan(selection: dict[str, Any], payloads: Path, index: dict[str, Any], replace: bool,
         report: Report) -> list[Plan]:
    """A plan per selected operator whose payload reads and whose aten schema is known."""
    plans: list[Plan] = []
    for name in sorted(selection["operators"]):
        entry = selection["operators"][name]
        if not name.replace("_", "a").isalnum():
            report.rejected[name] = "not a usable operator name (letters, digits, underscores)"
            continue
        path = payloads / f"{name}.json"
        if not path.is_file():
            report.rejected[name] = f"no payload {path}"
            continue
        if name in index["ops"] and not replace:
            report.rejected[name] = (f"already imported as {index['ops'][name]['module']}; "
                                     "pass --replace to import it again")
            continue
        try:
            payload = load(path, name)
            op = resolve(payload.op_name)
        except (DataError, SchemaError) as exc:
            report.rejected[name] = str(exc)
            continue
        plans.append(Plan(name=name, aten=op.qualified, category=category(op),
                          payload=payload, selection=entry))
    return plans


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()


def _device(outcome: Outcome) -> str:
    timing = outcome.timing or {}
    device = timing.get("device") or {}
    if device.get("name"):
        return str(device["name"])
    return "cpu (Triton interpreter)" if (outcome.accuracy or {}).get("shapes") == "ci" else \
        "cuda"


def record(p: Plan, outcome: Outcome, selection: dict[str, Any], batch: int,
           rejudged: dict[str, Any] | None) -> dict[str, Any]:
    """The operator's index entry: provenance, accuracy and performance with device and date."""
    now = _now()
    figure = "avg_speedup_vs_flaggems" if batch == 1 else "avg_relative_to_cuda"
    perf_source = rejudged if rejudged is not None else p.selection
    return {
        "name": p.name, "aten": [p.aten], "category": p.category, "module": p.module,
        "test": p.test, "entry": p.payload.entry, "params": p.payload.call_params(),
        "shapes": p.shapes(), "dtypes": p.dtypes(), "status": "experimental", "batch": batch,
        "source": {"payload": p.payload.path.name, "sha256": p.payload.digest},
        "generator": p.payload.generator, "generator_report": p.payload.info, "imported": now,
        "accuracy": {**(outcome.accuracy or {}), "device": _device(outcome), "date": now},
        "performance": {
            "source": "remeasured" if rejudged is not None else "supplied",
            "criterion": selection.get("criterion"), "threshold": selection.get("threshold"),
            figure: perf_source.get(figure), "configs": perf_source.get("configs", []),
            "device": _device(outcome) if rejudged is not None else "as supplied",
            "date": now,
        },
    }


def assemble(dest: Path, stage: Path, checked: Path, accepted: dict[str, dict[str, Any]],
             index: dict[str, Any], digests: dict[str, dict[str, str]]) -> list[str]:
    """Build the destination's next state in `stage`; the relative paths that change. Each
    operator's files must still be what was checked (`digests`), or nothing is assembled."""
    if dest.exists():
        shutil.copytree(dest, stage, ignore=IGNORE)
    stage.mkdir(parents=True, exist_ok=True)
    changed: list[str] = []
    for rel, text in experimental.SCAFFOLD.items():
        if not (stage / rel).exists():
            (stage / rel).parent.mkdir(parents=True, exist_ok=True)
            (stage / rel).write_text(text, encoding="utf-8")
            changed.append(rel)
    for name, rec in sorted(accepted.items()):
        old = index["ops"].get(name)
        if old is not None:  # --replace: the old files go, even under another category
            for rel in (old["module"], old["test"]):
                (stage / rel).unlink(missing_ok=True)
        package = Path(rec["module"]).parent / "__init__.py"
        if not (stage / package).exists():  # a package, so wheels carry the operator too
            (stage / package).parent.mkdir(parents=True, exist_ok=True)
            (stage / package).write_text(CATEGORY_INIT.format(rec["category"]),
                                         encoding="utf-8")
            changed.append(package.as_posix())
        for rel in (rec["module"], rec["test"]):
            source = checked / name / rel
            if digests.get(name, {}).get(rel) != hashlib.sha256(source.read_bytes()).hexdigest():
                raise ImportUsageError(f"{name}: {rel} changed after it was checked; nothing "
                                       "was imported (run the import again)")
            shutil.copyfile(source, stage / rel)
            changed.append(rel)
        index["ops"][name] = rec
    (stage / experimental.INDEX).write_text(dumps(index), encoding="utf-8")
    changed.append(experimental.INDEX)
    return changed


def swap(stage: Path, dest: Path) -> None:
    """Put `stage` where `dest` is; on any failure or interrupt `dest` is as it was."""
    token = uuid.uuid4().hex[:8]
    new = dest.parent / f".{dest.name}.new-{token}"
    old = dest.parent / f".{dest.name}.old-{token}"
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        shutil.copytree(stage, new)
        if dest.exists():
            os.rename(dest, old)
        os.rename(new, dest)
    except BaseException:
        if not dest.exists() and old.exists():
            os.rename(old, dest)
        shutil.rmtree(new, ignore_errors=True)
        raise
    finally:
        if dest.exists() and old.exists():
            shutil.rmtree(old, ignore_errors=True)


Rejudge = Callable[[Plan, Outcome], tuple[dict[str, Any] | None, str]]


def run(selection: dict[str, Any], payloads: Path, dest: Path, settings: Settings, *,
        replace: bool = False, dry_run: bool = False, rejudge: Rejudge | None = None,
        progress: Callable[[str], None] = print) -> Report:
    """Check every selected operator, then take in the ones that pass (unless `dry_run`)."""
    if not payloads.is_dir():
        raise ImportUsageError(f"--payloads {payloads}: no such folder (one <op>.json each)")
    try:
        index = experimental.read_index(dest)
    except experimental.BrokenIndex as exc:
        raise ImportUsageError(str(exc)) from exc
    if settings.sandbox:
        try:
            bubblewrap.find()
        except bubblewrap.SandboxUnavailable as exc:
            raise ImportUsageError(f"{exc}; or pass --no-sandbox to run the generated code as "
                                   "plain processes of your user (only for payloads you "
                                   "trust)") from exc
    report = Report()
    plans = plan(selection, payloads, index, replace, report)
    accepted: dict[str, dict[str, Any]] = {}
    digests: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory(prefix="flagbot-import-") as tmp:
        checked = Path(tmp) / "checked"
        for p in plans:
            progress(f"{p.name}: checking {p.payload.op_name} ({p.category}) ...")
            outcome = check(p, checked / p.name, settings)
            rejudged: dict[str, Any] | None = None
            if outcome.ok and rejudge is not None:
                rejudged, why = rejudge(p, outcome)
                if rejudged is None:
                    outcome = Outcome(False, why, outcome.accuracy, outcome.timing)
            if not outcome.ok:
                report.rejected[p.name] = outcome.reason
                continue
            accepted[p.name] = record(p, outcome, selection, settings.batch, rejudged)
            digests[p.name] = outcome.digests
            report.imported[p.name] = [p.module, p.test]
        if not accepted:
            return report
        stage = Path(tmp) / "stage"
        report.written = assemble(dest, stage, checked, accepted, index, digests)
        if not dry_run:
            swap(stage, dest)
    return report

