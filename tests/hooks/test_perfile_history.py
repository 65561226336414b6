"""patch_history.yaml: the update the maintainers' tool makes, written the way it writes it."""

from __future__ import annotations

import yaml

from flagbot.hooks.patches.perfile_history import record
from tests.hooks import perfile_repo as pr

REAL = (pr.EXTRACT / pr.HW / "patch_history.yaml").read_text()
NEW = "f" * 40


def test_recording_appends_to_the_joined_and_each_single_backend_key() -> None:
    text = record(REAL, "Metax_C550", ["inference"], ["vllm", "FlagScale"], NEW)
    doc = yaml.safe_load(text)["Metax_C550"]["inference"]
    assert doc["FlagScale+vllm"] == [NEW] and doc["vllm"] == [NEW]
    assert doc["FlagScale"][-1] == NEW and len(doc["FlagScale"]) == 5
    assert text.startswith(REAL.split("Metax_C550:")[0])  # earlier devices untouched, in order


def test_recording_twice_changes_nothing_and_untouched_text_is_byte_stable() -> None:
    once = record(REAL, "Cambricon_MLU", ["train"], ["FlagScale"], NEW)
    assert record(once, "Cambricon_MLU", ["train"], ["FlagScale"], NEW) == once
    assert record(REAL, "Cambricon_MLU", [], ["FlagScale"], NEW) == REAL


def test_a_new_device_and_task_are_added_at_the_end() -> None:
    text = record(REAL, "Moore_S4000", ["post_train"], ["FlagScale"], NEW)
    assert text.endswith(f"Moore_S4000:\n  post_train:\n    FlagScale:\n    - {NEW}\n")


def test_the_bot_update_is_byte_for_byte_the_maintainers_commit() -> None:
    """FlagScale's #908 recorded the merges of #907 and #906 by hand; the same two records
    made here give exactly its file."""
    real = pr.EXTRACT.parent / "flagscale-history"
    text = record((real / "before-908.yaml").read_text(), "NVIDIA_CambriconMLU", ["train"],
                  ["Megatron-LM"], "631ebb869a58a4d495a4c2bd1698e31409448ca6")
    text = record(text, "Cambricon_MLU", ["train"], ["FlagScale", "Megatron-LM"],
                  "a4434373b7d0bf952d8d6eecb036243cd0a7a049")
    assert text == (real / "after-908.yaml").read_text()
