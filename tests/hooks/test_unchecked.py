"""`--strict` and the exit status of a run that may have checked nothing."""

from __future__ import annotations

import pytest

from flagbot.hooks import unchecked
from flagbot.hooks.findings import ERROR, WARNING, Finding

EMPTY = unchecked.finding("backends", "no _<vendor> folder under backends/")


@pytest.mark.parametrize("flag, environ, strict", [
    (None, {}, False),
    (None, {"PRE_COMMIT": "1"}, True),
    (False, {"PRE_COMMIT": "1"}, False),
    (True, {}, True),
])
def test_strict_defaults_on_only_under_pre_commit(flag: bool | None, environ: dict[str, str],
                                                  strict: bool) -> None:
    assert unchecked.strict_mode(flag, environ) is strict


def test_nothing_checked_fails_only_when_strict() -> None:
    assert unchecked.exit_status([EMPTY], strict=False) == 0
    assert unchecked.exit_status([EMPTY], strict=True) == 1


def test_other_warnings_never_fail_and_errors_always_do() -> None:
    warning = Finding("x", 0, WARNING, "device-query-empty", "m")
    assert unchecked.exit_status([warning], strict=True) == 0
    assert unchecked.exit_status([Finding("x", 0, ERROR, "all-duplicate", "m")], strict=False) == 1
