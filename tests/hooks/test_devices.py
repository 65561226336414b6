from __future__ import annotations

import pytest

from flagbot.hooks.errors import UsageError
from flagbot.hooks.patches import devices


@pytest.mark.parametrize("name", ["A_X100", "Cambricon_MLU370", "NVIDIA_CambriconMLU", "BI_V150_2"])
def test_device_names_like_a_x100_are_accepted(name: str) -> None:
    assert devices.check_device(name) == name


@pytest.mark.parametrize("name", ["AX100", "A_", "_X", "A__X", "A_X/1", "../A_X", "A X", "A_X-1", ""])
def test_other_device_names_are_usage_errors(name: str) -> None:
    with pytest.raises(UsageError):
        devices.check_device(name)


@pytest.mark.parametrize("rev", ["abcd1234", "HEAD", "HEAD~2", "v1.0", "main", "HEAD^",
                                 "vendor/A_X100", "a/b"])
def test_revisions_are_accepted(rev: str) -> None:
    assert devices.check_commit(rev, option="--x") == rev


@pytest.mark.parametrize("rev", ["a..b", "a b", "-x", "../x", "", "a...b", "/a", "a/", "a//b",
                                 "a/.b"])
def test_path_tricks_in_revisions_are_usage_errors(rev: str) -> None:
    with pytest.raises(UsageError):
        devices.check_commit(rev, option="--x")


@pytest.mark.parametrize("value, ok", [("abcd", True), ("ABCDEF12", True), ("abc", False),
                                       ("abcg", False), ("../abcd", False)])
def test_base_prefixes_need_four_hex_digits(value: str, ok: bool) -> None:
    if ok:
        assert devices.check_hex_prefix(value, option="--commit-id") == value.lower()
    else:
        with pytest.raises(UsageError):
            devices.check_hex_prefix(value, option="--commit-id")
