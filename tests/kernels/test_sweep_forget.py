"""benchmarks/sweep_forget.py: the rows of a saved sweep whose launches a patch changes are
dropped from its parts (found on the CPU in both trees), their stages marked incomplete so
that a resumed sweep measures them again; nothing else is touched."""

from __future__ import annotations

import difflib
import json
import tarfile
from pathlib import Path
from typing import Any

import pytest

from .benchmarks_support import load_benchmark


@pytest.fixture(scope="module")
def forget() -> Any:
    return load_benchmark("sweep_forget")


def _row(key: str, op: str, case: str) -> dict[str, Any]:
    return {"key": key, "op": op, "case": case, "dtype": "float16", "layout": "contiguous",
            "vs_torch": 1.0, "device_vs_torch": 1.0, "accuracy": "ok",
            "us": {"generic": 10.0, "torch": 10.0}, "device_us": {"generic": 10.0, "torch": 10.0}}


def _parts_folder(tmp_path: Path) -> Path:
    meta = {"device": {"name": "H200", "index": 0}, "copy_gbps": 4000.0, "complete": True,
            "shard": "0/1"}
    parts = tmp_path / "sweep.parts"
    parts.mkdir(parents=True)
    (parts / "fixed-part-0.json").write_text(json.dumps(
        {**meta, "rows": [_row("fixed:0", "mm", "512x512x512")], "random": []}))
    (parts / "seed-7-part-0.json").write_text(json.dumps(
        {**meta, "rows": [], "random": [{"seed": 7, "count": 3, "rows": [
            _row("random:7:0", "mm", "73x2047x4096"), _row("random:7:1", "mm", "2048x2048x64"),
            _row("random:7:2", "add", "9x7")]}]}))
    return parts


def _archive(tmp_path: Path) -> Path:
    parts = _parts_folder(tmp_path)
    archive = tmp_path / "parts.tgz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(parts, arcname="sweep.parts")
    return archive


def _patch(forget: Any, tmp_path: Path) -> Path:
    # the tree the parts were "measured with" never split K for 16-bit products over 64 rows:
    # of the three mm rows only 73x2047x4096 (32 tiles, split here) launches differently
    rules = Path(forget.ab_rows.ROOT) / "kernels" / "ops" / "mm.py"
    text = rules.read_text(encoding="utf-8")
    assert "\nSPLIT_MIN_K = 1024 " in text
    patch = tmp_path / "back.patch"
    patch.write_text("".join(difflib.unified_diff(
        text.splitlines(True),
        text.replace("\nSPLIT_MIN_K = 1024 ", "\nSPLIT_MIN_K = 1 << 30 ").splitlines(True),
        "a/kernels/ops/mm.py", "b/kernels/ops/mm.py")))
    return patch


@pytest.mark.parametrize("filters", [True, False], ids=["data-filter", "no-filters"])
def test_the_changed_rows_are_dropped_and_their_stage_marked_incomplete(
        forget: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, filters: bool) -> None:
    # Pythons before 3.11.4 (Debian 12's) have no extraction filters: the same run there
    if not filters:
        monkeypatch.delattr(tarfile, "data_filter", raising=False)
    archive = _archive(tmp_path / "in")
    original = archive.read_bytes()
    patch = _patch(forget, tmp_path)
    assert forget.main([str(archive), str(patch), "--dry-run"]) == 0
    assert capsys.readouterr().out.split("\n")[0] == "mm 73x2047x4096 float16 contiguous"
    assert archive.read_bytes() == original  # a dry run writes nothing
    assert forget.main([str(archive), str(patch)]) == 0
    assert (tmp_path / "in" / "parts.tgz.bak").read_bytes() == original
    out = tmp_path / "out"
    forget.unpack(archive, out)
    seed = json.loads((out / "sweep.parts" / "seed-7-part-0.json").read_text())
    assert [r["case"] for r in seed["random"][0]["rows"]] == ["2048x2048x64", "9x7"]
    assert seed["complete"] is False
    fixed = json.loads((out / "sweep.parts" / "fixed-part-0.json").read_text())
    assert fixed["complete"] is True and len(fixed["rows"]) == 1


def test_rows_named_with_row_are_forgotten_too(forget: Any, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    # a reading known to be disturbed, or a row whose host path (not its launches) changed
    archive = _archive(tmp_path / "in")
    patch = _patch(forget, tmp_path)
    assert forget.main([str(archive), str(patch), "--row", "add 9x7 float16 contiguous",
                        "--row", "mm 512x512x512 float16 contiguous"]) == 0
    assert capsys.readouterr().out.split() == [
        "add", "9x7", "float16", "contiguous", "mm", "512x512x512", "float16", "contiguous",
        "mm", "73x2047x4096", "float16", "contiguous"]
    out = tmp_path / "out"
    forget.unpack(archive, out)
    seed = json.loads((out / "sweep.parts" / "seed-7-part-0.json").read_text())
    assert [r["case"] for r in seed["random"][0]["rows"]] == ["2048x2048x64"]
    fixed = json.loads((out / "sweep.parts" / "fixed-part-0.json").read_text())
    assert fixed["complete"] is False and fixed["rows"] == []
    # a row the archive does not hold is refused, nothing written
    before = archive.read_bytes()
    with pytest.raises(SystemExit):
        forget.main([str(archive), str(patch), "--row", "mm 1x1x1 float16 contiguous"])
    assert archive.read_bytes() == before


def test_an_empty_patch_forgets_only_the_named_rows(forget: Any, tmp_path: Path) -> None:
    # writing parts back from a merged result (--from) needs no patch: nothing launches
    # differently, and --row still names rows to measure again
    archive = _archive(tmp_path / "in")
    empty = tmp_path / "none.patch"
    empty.write_text("")
    original = archive.read_bytes()
    assert forget.main([str(archive), str(empty)]) == 0
    assert archive.read_bytes() == original  # nothing to forget, nothing written
    assert forget.main([str(archive), str(empty), "--row", "add 9x7 float16 contiguous"]) == 0
    out = tmp_path / "out"
    forget.unpack(archive, out)
    seed = json.loads((out / "sweep.parts" / "seed-7-part-0.json").read_text())
    assert [r["case"] for r in seed["random"][0]["rows"]] == ["73x2047x4096", "2048x2048x64"]


def test_bad_arguments_are_refused_with_the_reason(forget: Any, tmp_path: Path) -> None:
    patch = _patch(forget, tmp_path)
    with pytest.raises(SystemExit):
        forget.main([str(tmp_path / "missing.tgz"), str(patch)])
    junk = tmp_path / "junk.tgz"
    junk.write_text("not an archive")
    with pytest.raises(SystemExit):
        forget.main([str(junk), str(patch)])
    # a member that would land outside the folder it is unpacked into is refused
    (tmp_path / "x.json").write_text("{}")
    escaping = tmp_path / "escaping.tgz"
    with tarfile.open(escaping, "w:gz") as tar:
        tar.add(tmp_path / "x.json", arcname="../x.json")
    with pytest.raises(SystemExit):
        forget.main([str(escaping), str(patch)])


def test_a_merged_result_is_written_back_as_parts_and_resumed_from(
        forget: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a record kept under benchmarks/results, its parts archive gone: --from rebuilds one part
    # per stage (each complete), then drops the changed rows as for any archive
    merged = forget.sweep_pool.merge(sorted(_parts_folder(tmp_path / "in").glob("*.json")))
    merged["random"][0]["summary"] = {"mm": {}}  # a finished result carries its summaries
    result = tmp_path / "record.json"
    result.write_text(json.dumps(merged))
    archive = tmp_path / "parts.tgz"
    assert forget.main([str(archive), str(_patch(forget, tmp_path)), "--from", str(result)]) == 0
    assert capsys.readouterr().out.split("\n")[0] == "mm 73x2047x4096 float16 contiguous"
    out = tmp_path / "out"
    forget.unpack(archive, out)
    seed = json.loads((out / "sweep.parts" / "seed-7-part-0.json").read_text())
    assert [r["case"] for r in seed["random"][0]["rows"]] == ["2048x2048x64", "9x7"]
    assert seed["complete"] is False and seed["shard"] == "0/1"
    assert "summary" not in seed["random"][0]
    fixed = json.loads((out / "sweep.parts" / "fixed-part-0.json").read_text())
    assert fixed["complete"] is True and [r["key"] for r in fixed["rows"]] == ["fixed:0"]
    assert fixed["device"] == merged["device"] and fixed["copy_gbps"] == 4000.0
    # an existing archive is never overwritten by --from, nor a non-result read as one
    with pytest.raises(SystemExit):
        forget.main([str(archive), str(tmp_path / "back.patch"), "--from", str(result)])
    (tmp_path / "junk.json").write_text('{"rows": 3}')
    with pytest.raises(SystemExit):
        forget.main([str(tmp_path / "new.tgz"), str(tmp_path / "back.patch"), "--from",
                     str(tmp_path / "junk.json")])
    assert not (tmp_path / "new.tgz").exists()


def test_a_result_saved_from_a_run_cut_short_resumes_the_stages_it_did_not_finish(
        forget: Any, tmp_path: Path) -> None:
    # the machine went back while seed 7's stage was still timing: its part says so, the
    # merged result names the stage, and parts rebuilt from that result leave it to a resume
    # (no row of it launches differently, so nothing else would have marked it)
    parts = _parts_folder(tmp_path / "in")
    seed_part = parts / "seed-7-part-0.json"
    seed_part.write_text(json.dumps({**json.loads(seed_part.read_text()), "complete": False}))
    merged = forget.sweep_pool.merge(sorted(parts.glob("*.json")))
    assert merged["incomplete"] == ["seed-7"]
    whole = forget.sweep_pool.merge([parts / "fixed-part-0.json"])
    assert whole["incomplete"] == []
    rebuilt = forget.parts_of(merged)
    assert rebuilt["seed-7"]["complete"] is False and rebuilt["fixed"]["complete"] is True
    assert "incomplete" not in rebuilt["fixed"]
    # a record from before results named their unfinished stages: every stage complete
    del merged["incomplete"]
    assert all(part["complete"] for part in forget.parts_of(merged).values())
