"""check-backend on forms met in real FlagGems vendor trees: each stays read correctly."""

from __future__ import annotations

from pathlib import Path

import pytest

from flagbot.hooks import check_vendor_backend as cvb
from flagbot.hooks.backend.rules import RULES
from testing.backend_corpus import FORMS, build_form, form_cases, read_case


@pytest.mark.parametrize("name", form_cases())
def test_real_form_reports_exactly_what_its_case_expects(name: str, tmp_path: Path) -> None:
    case = read_case(FORMS / name)
    root, folder = build_form(name, tmp_path)
    findings = cvb.check_backends(tmp_path, [folder], root=root)
    got = {(f.rule, f.severity) for f in findings}
    for rule, severity in case.get("expect", {}).items():
        assert (rule, severity) in got, f"{name}: expected {rule} ({severity}), got {sorted(got)}"
    for rule in case.get("absent", []):
        assert rule not in {r for r, _ in got}, f"{name}: {rule} must not be reported: {findings}"
    if "message" in case:
        assert any(case["message"] in f.message for f in findings), findings


def test_every_form_case_names_known_rules() -> None:
    for name in form_cases():
        case = read_case(FORMS / name)
        assert case.get("expect") or case.get("absent"), name
        assert set(case.get("expect", {})) | set(case.get("absent", [])) <= set(RULES), name


def test_computed_optional_field_is_a_warning_but_computed_vendor_name_an_error(tmp_path: Path) -> None:
    root, folder = build_form("descriptor-computed-optional", tmp_path)
    init = tmp_path / folder / "__init__.py"
    init.write_text(init.read_text().replace('vendor_name="acme"', "vendor_name=_extra_name()"))
    rules = {f.rule for f in cvb.check_backends(tmp_path, [folder], root=root)}
    assert "descriptor-literal" in rules


def test_module_then_function_import_still_flags_two_function_imports(tmp_path: Path) -> None:
    root, folder = build_form("module-then-function-import", tmp_path)
    init = tmp_path / folder / "ops" / "__init__.py"
    init.write_text(init.read_text() + "from .softmax import softmax as add\n")
    rules = {f.rule for f in cvb.check_backends(tmp_path, [folder], root=root)}
    assert "op-duplicate" in rules
