"""The backend checker and the kernel harness agree on every backend of the corpus.

`flagbot check-backend` (hooks/backend/) and `flagbot kernels check` (kernels/loader.py, which
runs `missing_files` and `load_backend_tunes` before importing a backend) must accept and
reject the same tune files for the same reasons: a tune error one finds, the other finds at
the same file and line, and a backend the checker passes is one the harness loads.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from flagbot.hooks import check_vendor_backend as cvb
from flagbot.hooks.backend.descriptor import DESCRIPTORS
from flagbot.hooks.findings import ERROR, Finding
from flagbot.kernels.flaggems_layout import missing_files
from flagbot.kernels.tune_configs import TuneConfigError, load_backend_tunes
from testing.backend_corpus import (
    CLEAN,
    broken_rules,
    build_case,
    build_clean,
    build_form,
    form_cases,
)

ROOT = Path(__file__).resolve().parents[1]
# What stops FlagGems (and the harness) from loading a backend's tune configs.
TUNE_RULES = frozenset({"yaml-syntax", "yaml-duplicate-key", "tune-schema"})
CASES = ([f"clean-{c}/{v.name}" for c in ("plain", "in-flaggems") for v in sorted(CLEAN.iterdir())]
         + [f"broken/{r}" for r in broken_rules()] + [f"form/{f}" for f in form_cases()])

Problem = tuple[str, int, str]  # (path inside the vendor folder, line, rule)


def _build(case: str, dest: Path) -> Path:
    kind, name = case.split("/")
    if kind.startswith("clean-"):
        root = build_clean(dest, context=kind == "clean-in-flaggems")
        return dest / root / name
    folder = build_case(name, dest)[1] if kind == "broken" else build_form(name, dest)[1]
    return dest / folder


def _checker_view(findings: list[Finding], folder: str) -> set[Problem]:
    return {(f.path.removeprefix(folder + "/"), f.line, f.rule) for f in findings
            if f.severity == ERROR and (f.rule in TUNE_RULES or f.rule == "required-file")}


def _harness_view(vendor: Path) -> set[Problem]:
    problems = {(rel, 0, "required-file") for rel in missing_files(vendor)}
    try:
        load_backend_tunes(vendor)
    except TuneConfigError as exc:
        problems |= {(src, p.line, p.rule) for src, p in exc.problems}
    return problems


@pytest.mark.parametrize("case", CASES)
def test_checker_and_harness_find_the_same_tune_errors(case: str, tmp_path: Path) -> None:
    vendor = _build(case, tmp_path)
    folder = vendor.relative_to(tmp_path).as_posix()
    findings = cvb.check_backends(tmp_path, [folder], root=folder.rsplit("/", 1)[0])
    checker, harness = _checker_view(findings, folder), _harness_view(vendor)
    assert checker == harness
    if not any(f.severity == ERROR for f in findings):
        load_backend_tunes(vendor)  # a backend the checker passes loads in the harness


def test_the_corpus_exercises_both_verdicts(tmp_path: Path) -> None:
    verdicts = {case: bool(_harness_view(_build(case, tmp_path / str(i))))
                for i, case in enumerate(CASES) if "tune" in case or "yaml" in case}
    assert any(verdicts.values()) and not all(verdicts.values()), verdicts


@pytest.mark.parametrize("vendor", ["_nvidia", "_template"])
def test_shipped_backends_pass_both(vendor: str) -> None:
    assert cvb.check_backends(ROOT, [f"backends/{vendor}"], root="backends") == []
    assert _harness_view(ROOT / "backends" / vendor) == set()


@pytest.mark.parametrize("cls", sorted(DESCRIPTORS))
def test_harness_descriptors_take_the_fields_the_checker_accepts(cls: str) -> None:
    from flagbot.kernels import backend_utils

    fields = [f.name for f in dataclasses.fields(getattr(backend_utils, cls))]
    assert fields == list(DESCRIPTORS[cls])
