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
    assert set(inputs) == {"device", "runner", "pr", "sha", "base", "backend", "ops",
                           "min_speedup", "min_native_fraction", "request_id"}
    assert len(inputs) <= 10  # GitHub's limit on workflow_dispatch inputs
    assert inputs["base"]["required"] is False
    assert all(inputs[k]["required"] for k in ("device", "runner", "pr", "sha", "backend", "request_id"))
    assert DOC["run-name"].endswith("[${{ inputs.request_id }}]")  # how a run finds its request


def test_runs_on_the_devices_runner_labels() -> None:
    assert JOB["runs-on"] == "${{ fromJSON(inputs.runner) }}"
    assert isinstance(JOB["timeout-minutes"], int)


def test_checks_out_the_exact_sha_without_persisted_credentials() -> None:
    checkout = step("actions/checkout@")
    assert checkout["with"]["ref"] == "${{ inputs.sha }}"
    assert checkout["with"]["persist-credentials"] is False


def test_installs_flagbot_from_one_documented_place_not_the_host_checkout() -> None:
    package = JOB["env"]["FLAGBOT_PACKAGE"]
    # no release exists: a git URL at a branch or commit (docs/install.md shows how to pin it)
    assert re.fullmatch(r"flagbot\[kernels\] @ git\+https://\S+@(main|[0-9a-f]{40})", package)
    assert TEXT.count("flagbot@") == 1 and "v0.1.0" not in TEXT
    install_doc = (PATH.parents[2] / "docs/install.md").read_text(encoding="utf-8")
    assert f'FLAGBOT_PACKAGE: "{package}"' in install_doc
    assert "bin/pip\" install --quiet \"$FLAGBOT_PACKAGE\"" in TEXT and '"$FLAGBOT_PACKAGE"' in TEXT
    assert "python -m flagbot" not in TEXT  # the console script: the checkout is not on its path


def test_runs_the_check_with_json_and_the_configured_gates() -> None:
    run = next(s for s in STEPS if "kernels check" in str(s.get("run", "")))
    assert "--json" in run["run"] and "--min-speedup" in run["run"] and "--min-native-fraction" in run["run"]
    # inputs reach the shell through the environment only, never spliced into the script
    assert all("${{" not in s.get("run", "") for s in STEPS)


def test_the_base_is_fetched_and_compared_and_plots_go_into_the_artifact() -> None:
    fetch = next(s for s in STEPS if "git fetch" in str(s.get("run", "")))
    assert fetch["env"]["BASE"] == "${{ inputs.base }}" and '"$BASE"' in fetch["run"]
    run = next(s for s in STEPS if "kernels check" in str(s.get("run", "")))
    assert 'git cat-file -e "$BASE^{commit}"' in run["run"]  # only a base that was fetched
    assert 'args+=(--compare-to "$BASE")' in run["run"]
    assert "||" in fetch["run"]  # a failed fetch (private repository) is a warning, not a failure
    assert '--plot "$RUNNER_TEMP/report/plots"' in run["run"]
    assert step("actions/upload-artifact@")["with"]["path"].endswith("/report/")


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
