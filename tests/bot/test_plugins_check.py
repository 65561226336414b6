"""`flagbot / plugins`: posted on PRs touching plugin registries, failing only on new errors."""

from __future__ import annotations

import json
from pathlib import Path

from flagbot.bot.admin.replay import main as replay_main
from tests.bot.handlers_support import BASE_FILES, REPO, deliver, open_pr, runs_by_name

PLUGINS = "flagbot / plugins"
VLLM = Path(__file__).resolve().parents[2] / "testing" / "resources" / "plugins" / "vllm"
METAX = "vllm_fl/dispatch/config/metax.yaml"
NVIDIA = "vllm_fl/dispatch/config/nvidia.yaml"


def plugin_repo(emu):  # type: ignore[no-untyped-def]
    """The base branch: the vllm-plugin-FL extract, with one defect already on it."""
    files = {p.relative_to(VLLM).as_posix(): p.read_text(encoding="utf-8")
             for p in VLLM.rglob("*") if p.is_file()}
    files[NVIDIA] = files[NVIDIA].replace("strict: false", 'strict: "false"')
    return emu.create_repo(REPO, files={**BASE_FILES, **files})


def test_replayed_pr_editing_a_dispatch_config_gets_the_plugins_check_run(
        emu, tmp_path, monkeypatch, capsys) -> None:
    repo = plugin_repo(emu)
    metax = (VLLM / METAX).read_text(encoding="utf-8").replace("- vendor:metax", "- vendor:cuda")
    pr = open_pr(emu, repo, {METAX: metax})
    payload = tmp_path / "payload.json"
    payload.write_text(json.dumps(emu.payload(event="pull_request", action="opened", repo=repo,
                                              number=pr["number"])))
    for key, value in {"GITHUB_APP_ID": emu.app_id, "GITHUB_PRIVATE_KEY": emu.private_key_pem,
                       "GITHUB_API_URL": emu.url, "FLAGBOT_STATE_DIR": str(tmp_path / "st"),
                       "FLAGBOT_WRITE_SPACING_S": "0"}.items():
        monkeypatch.setenv(key, value)
    assert replay_main([str(payload), "--event", "pull_request"]) == 1  # a check failed
    assert "flagbot / plugins: failure" in capsys.readouterr().out
    run = runs_by_name(emu, repo, pr["head"]["sha"])[PLUGINS]
    assert run["conclusion"] == "failure"
    failures = [(a["path"], a["start_line"], a["title"]) for a in run["output"]["annotations"]
                if a["annotation_level"] == "failure"]
    assert failures == [(METAX, 5, "plugin-no-implementation")]  # not the inherited strict
    summary = run["output"]["summary"]
    assert "**1 new, 5 existing**" in summary
    assert "plugin-strict" in summary.split("<details>")[1]  # listed apart, as inherited


def test_clean_config_edit_passes_and_unrelated_prs_get_no_plugins_run(emu, settings) -> None:
    repo = plugin_repo(emu)
    metax = (VLLM / METAX).read_text(encoding="utf-8").replace("topk_softmax: [flagos, reference]",
                                                                 "topk_softmax: [vendor, flagos]")
    pr = open_pr(emu, repo, {METAX: metax})
    deliver(emu, settings, repo, pr["number"])
    assert runs_by_name(emu, repo, pr["head"]["sha"])[PLUGINS]["conclusion"] == "success"
    other = open_pr(emu, repo, {"src/core.py": "x = 3\n"}, branch="other")
    deliver(emu, settings, repo, other["number"], delivery="d-2")
    assert PLUGINS not in runs_by_name(emu, repo, other["head"]["sha"])


def test_a_megatron_folder_without_an_override_registry_gets_no_plugins_run(emu, settings, repo) -> None:
    pr = open_pr(emu, repo, {"megatron/core/model.py": "x = 1\n"})
    deliver(emu, settings, repo, pr["number"])
    assert PLUGINS not in runs_by_name(emu, repo, pr["head"]["sha"])
