"""The shipped `.github/workflows/device-check.yml` works in any host repository: the inputs the
bot sends, runs-on from them, the exact sha without credentials, a pinned flagbot, the JSON
report in an artifact named by the request id, no secrets, a read-only token."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from flagbot.bot.devices import local
from flagbot.bot.devices.ids import ARTIFACT

PATH = Path(__file__).resolve().parents[1] / ".github/workflows/device-check.yml"
TEXT = PATH.read_text(encoding="utf-8")
DOC: dict[str, Any] = yaml.safe_load(TEXT)
JOB = DOC["jobs"]["check"]
STEPS = JOB["steps"]


def step(uses: str) -> dict[str, Any]:
    return next(s for s in STEPS if str(s.get("uses", "")).startswith(uses))


def test_dispatch_inputs_are_the_ones_the_bot_sends() -> None:
    inputs = DOC[True]["workflow_dispatch"]["inputs"]  # YAML 1.1 reads `on` as True
    assert set(inputs) == {"device", "runner", "pr", "sha", "backend", "ops", "min_speedup",
                           "min_native_fraction", "request_id"}
    assert all(inputs[k]["required"] for k in ("device", "runner", "pr", "sha", "backend", "request_id"))
    assert DOC["run-name"].endswith("[${{ inputs.request_id }}]")  # how a run finds its request


def test_runs_on_the_devices_runner_labels() -> None:
    assert JOB["runs-on"] == "${{ fromJSON(inputs.runner) }}"
    assert isinstance(JOB["timeout-minutes"], int)


def test_checks_out_the_exact_sha_without_persisted_credentials() -> None:
    checkout = step("actions/checkout@")
    assert checkout["with"]["ref"] == "${{ inputs.sha }}"
    assert checkout["with"]["persist-credentials"] is False


def test_installs_a_pinned_flagbot_not_the_host_checkout() -> None:
    package = JOB["env"]["FLAGBOT_PACKAGE"]
    assert re.fullmatch(r"flagbot\[kernels\] @ git\+https://\S+@v\d+\.\d+\.\d+", package)
    assert "bin/pip\" install --quiet \"$FLAGBOT_PACKAGE\"" in TEXT and '"$FLAGBOT_PACKAGE"' in TEXT
    assert "python -m flagbot" not in TEXT  # the console script: the checkout is not on its path


def test_runs_the_check_with_json_and_the_configured_gates() -> None:
    run = next(s for s in STEPS if "kernels check" in str(s.get("run", "")))
    assert "--json" in run["run"] and "--min-speedup" in run["run"] and "--min-native-fraction" in run["run"]
    # inputs reach the shell through the environment only, never spliced into the script
    assert all("${{" not in s.get("run", "") for s in STEPS)


def test_the_artifact_name_carries_the_request_id() -> None:
    upload = step("actions/upload-artifact@")
    assert upload["if"] == "always()"
    assert upload["with"]["name"] == ARTIFACT.format(request="${{ inputs.request_id }}")


def test_no_secrets_and_a_read_only_token() -> None:
    assert "secrets." not in TEXT
    assert DOC["permissions"] == {"contents": "read"}
    assert "permissions" not in JOB


def test_the_local_runner_runs_the_same_check() -> None:
    argv = local.command("backends/_x", ["softmax"], 1.3, 0.8, Path("/tmp/r.json"))
    assert argv[1] == "-I" and argv[4:8] == ["check", "--backend", "backends/_x", "--json"]
    assert "--min-speedup" in argv and "--ops" in argv
    # the installed flagbot, never a folder put on the child's path (the checkout has no links)
    assert "sys.path" not in argv[3] and "flagbot.kernels.cli" in argv[3]
