"""Repository config: read from the default branch, merged, validated; errors fail both checks."""

from __future__ import annotations

import pytest

from flagbot.bot.handlers.globs import compile_globs, matching_glob
from flagbot.hooks.config import DEFAULT_PRIVATEUSE1_PATHS, ConfigError, parse_config
from tests.bot.handlers_support import BASE_FILES, deliver, open_pr, runs_by_name

BAD = "labels:\n  vendor:\n    pattern: 'vendor'\n    color: '#00ff00'\nhardwares: /abs\n"


@pytest.fixture
def bad_repo(emu):
    return emu.create_repo("flagos/Bad", files={**BASE_FILES, ".github/flagbot.yml": BAD})


def test_config_errors_fail_both_checks_naming_each_key(emu, settings, bad_repo) -> None:
    pr = open_pr(emu, bad_repo, {"hardwares/A_X100/x.md": "x\n"})
    result = deliver(emu, settings, bad_repo, pr["number"])
    runs = runs_by_name(emu, bad_repo, pr["head"]["sha"])
    for run in runs.values():
        assert run["conclusion"] == "failure"
        assert run["output"]["title"] == "invalid .github/flagbot.yml"
        for key in ("labels.vendor.pattern", "labels.vendor.color", "hardwares"):
            assert key in run["output"]["summary"]
    assert sorted(runs) == ["flagbot / backends", "flagbot / patches"]
    assert emu.issue_labels(bad_repo, pr["number"]) == []
    [comment] = emu.comments(bad_repo, pr["number"])
    assert "has errors" in comment["body"] and "labels.vendor.pattern" in comment["body"]
    assert result["config_error"]


def test_yaml_syntax_error_is_reported_not_raised(emu, settings) -> None:
    repo = emu.create_repo("flagos/Yaml", files={**BASE_FILES, ".github/flagbot.yml": "labels: [\n"})
    pr = open_pr(emu, repo, {"x.md": "x\n"})
    deliver(emu, settings, repo, pr["number"])
    run = runs_by_name(emu, repo, pr["head"]["sha"])["flagbot / patches"]
    assert "not valid YAML" in run["output"]["summary"]


def test_config_comes_from_default_branch_not_the_pr(emu, settings) -> None:
    good = "labels:\n  vendor:\n    pattern: 'hw/{device}'\n"
    repo = emu.create_repo("flagos/Cfg", files={**BASE_FILES, ".github/flagbot.yml": good})
    pr = open_pr(emu, repo, {".github/flagbot.yml": "labels: nonsense\n", "hardwares/A_X100/x.md": "x\n"})
    deliver(emu, settings, repo, pr["number"])
    assert emu.issue_labels(repo, pr["number"]) == ["hw/A_X100"]


def test_fixing_the_config_lets_the_next_delivery_pass(emu, settings, bad_repo) -> None:
    pr = open_pr(emu, bad_repo, {"x.md": "x\n"})
    deliver(emu, settings, bad_repo, pr["number"])
    emu.push_commit(bad_repo, branch="main", files={".github/flagbot.yml": "hardwares: hw\n"})
    deliver(emu, settings, bad_repo, pr["number"], delivery="d-2")
    runs = emu.check_runs(bad_repo, pr["head"]["sha"])
    assert [r["conclusion"] for r in runs if r["name"] == "flagbot / patches"][-1] == "success"
    assert len(emu.comments(bad_repo, pr["number"])) == 1


@pytest.mark.parametrize("text,key", [
    ("labels:\n  privateuse1:\n    color: red\n", "labels.privateuse1.color"),
    ("labels:\n  extra: {}\n", "labels.extra"),
    ("labels:\n  privateuse1:\n    name: ''\n", "labels.privateuse1.name"),
    ("backends: ../up\n", "backends"),
    ("labels:\n  device:\n    pattern: adapts\n", "labels.device.pattern"),
    ("commands:\n  patch: everyone\n", "commands.patch.permission"),
    ("drift:\n  every_hours: -1\n", "drift.every_hours"),
    ("drift:\n  every_hours: daily\n", "drift.every_hours"),
    ("drift:\n  hours: 3\n", "drift"),
    ("plugins:\n  paths: vllm_fl/**\n", "plugins.paths"),
    ("kernels:\n  dispatch: push\n", "kernels.dispatch"),
    ("kernels:\n  quarantine: [softmax]\n", "kernels.quarantine"),
    ("kernels:\n  quarantine:\n    a_x100: softmax\n", "kernels.quarantine.a_x100"),
    ("kernels:\n  quarantine:\n    a_x100: ['Soft max']\n", "kernels.quarantine.a_x100"),
])
def test_invalid_label_settings_name_their_key(text: str, key: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_config(text)
    assert any(p.startswith(key + ":") for p in err.value.problems)


def test_drift_period_takes_fractions_and_zero() -> None:
    assert parse_config("drift:\n  every_hours: 0.5\n")["drift"]["every_hours"] == 0.5
    assert parse_config("drift:\n  every_hours: 0\n")["drift"]["every_hours"] == 0
    assert parse_config(None)["drift"]["every_hours"] == 24


@pytest.mark.parametrize("path", [
    "aten/src/ATen/detail/PrivateUse1HooksInterface.h", "torch/csrc/acc/Module.cpp",
    "torch/utils/backend_registration.py", "test/cpp_extensions/open_registration_extension/x/y.cpp",
    "c10/core/DeviceType.h", "torch_fl/ops/add.py", "csrc/aten/register.cc", "backends.conf",
    "configs/backends_nv.conf",
])
def test_default_privateuse1_globs_cover_the_issue_list(path: str) -> None:
    assert matching_glob(path, compile_globs(tuple(DEFAULT_PRIVATEUSE1_PATHS)))


@pytest.mark.parametrize("path", ["torch/nn/functional.py", "aten/src/ATen/native/Linear.cpp", "README.md"])
def test_default_privateuse1_globs_skip_ordinary_code(path: str) -> None:
    assert matching_glob(path, compile_globs(tuple(DEFAULT_PRIVATEUSE1_PATHS))) is None
