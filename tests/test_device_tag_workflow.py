"""The shipped `.github/workflows/device-check-tag.yml` (tag dispatch): started by ciflow tags,
settings from the default branch's config, the tagged sha without credentials, pinned flagbot,
the artifact name the bot looks for, one run per (device, PR), no secrets, a read-only token."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from flagbot.bot.devices.ids import TAG, TAG_ARTIFACT
from testing.github_emulator.tag_push import matches, tag_filters

PATH = Path(__file__).resolve().parents[1] / ".github/workflows/device-check-tag.yml"
TEXT = PATH.read_text(encoding="utf-8")
DOC: dict[str, Any] = yaml.safe_load(TEXT)
PLAN, CHECK = DOC["jobs"]["plan"], DOC["jobs"]["check"]


def test_starts_on_the_bots_tags_only() -> None:
    filters = tag_filters(DOC)
    assert filters is not None and set(DOC[True]) == {"push"}  # YAML 1.1 reads `on` as True
    assert matches(filters, TAG.format(device="a_x100", pr=12))
    assert not matches(filters, "v1.0") and not matches(filters, "release/ciflow/x")
    assert DOC["name"] == "device-check"  # the workflow_job handler knows its jobs by this name


def test_one_run_per_device_and_pr_and_a_moved_tag_cancels_the_old_one() -> None:
    assert DOC["concurrency"] == {"group": "device-check-${{ github.ref_name }}", "cancel-in-progress": True}


def test_settings_come_from_the_default_branch_config_on_a_hosted_runner() -> None:
    checkout = PLAN["steps"][0]
    assert checkout["with"]["ref"] == "${{ github.event.repository.default_branch }}"
    assert checkout["with"]["persist-credentials"] is False and PLAN["runs-on"] == "ubuntu-latest"
    script = PLAN["steps"][1]["run"]
    assert "-m flagbot.bot.devices.tag_inputs" in script and '>> "$GITHUB_OUTPUT"' in script
    assert CHECK["runs-on"] == "${{ fromJSON(needs.plan.outputs.runner) }}" and CHECK["needs"] == "plan"


def test_checks_the_tagged_sha_with_pinned_flagbot_and_names_the_artifact() -> None:
    checkout = next(s for s in CHECK["steps"] if str(s.get("uses", "")).startswith("actions/checkout@"))
    assert checkout["with"] == {"ref": "${{ github.sha }}", "persist-credentials": False, "path": "src"}
    for job, extra in ((PLAN, ""), (CHECK, r"\[kernels\]")):
        assert re.fullmatch(rf"flagbot{extra} @ git\+https://\S+@(main|[0-9a-f]{{40}})", job["env"]["FLAGBOT_PACKAGE"])
    upload = next(s for s in CHECK["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact@"))
    assert upload["with"]["name"] == "${{ needs.plan.outputs.artifact }}" and upload["if"] == "always()"
    assert TAG_ARTIFACT.startswith("flagbot-kernels-")


def test_no_secrets_a_read_only_token_and_no_expressions_in_scripts() -> None:
    assert DOC["permissions"] == {"contents": "read"} and "secrets." not in TEXT
    for job in (PLAN, CHECK):
        assert all("${{" not in s.get("run", "") for s in job["steps"])
