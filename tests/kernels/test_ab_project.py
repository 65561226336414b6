"""benchmarks/ab_project.py: a record as this tree's kernels would read it, from an A/B already
timed. A row takes a head's reading only where that head launched it exactly as this tree
does; a changed row no head timed is named and fails the run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .benchmarks_support import load_benchmark


@pytest.fixture(scope="module")
def proj() -> Any:
    return load_benchmark("ab_project")


def _row(case: str, vs: float, dev: float, layout: str = "contiguous") -> dict[str, Any]:
    return {"op": "mm", "case": case, "dtype": "float16", "layout": layout, "accuracy": "ok",
            "vs_torch": vs, "device_vs_torch": dev, "us": {"generic": 10.0, "torch": 10.0 * vs},
            "device_us": {"generic": 10.0, "torch": 10.0 * dev}}


def _name(case: str) -> str:
    return f"mm {case} float16 contiguous"


def _spec(block: int, **extra: int) -> str:
    return json.dumps({"kernel": "m:k", "warps": 4, "constexprs": {"BLOCK": block, **extra}},
                      sort_keys=True)


def _ab(tmp_path: Path) -> Path:
    """An A/B folder: rows a, b, c; head1 changes a's tile, head2 changes b's (and gives its
    kernel a constant the base lacks, which alone changes nothing)."""
    out = tmp_path / "ab"
    out.mkdir()
    launches = {"base": {"a": 64, "b": 64, "c": 64}, "head1": {"a": 128, "b": 64, "c": 64},
                "head2": {"a": 64, "b": 32, "c": 64}}
    for name, blocks in launches.items():
        extra = {"ALIGN": 8} if name == "head2" else {}
        (out / f"launches-{name}.json").write_text(json.dumps(
            {_name(f"{r}x1x1"): [_spec(b, **extra)] for r, b in blocks.items()}))
    # rounds: the best reading of each variant is kept (head1's a: 0.9 then 1.2)
    rounds = {"base-0": {"a": 0.5, "b": 0.9, "c": 0.7}, "head1-0": {"a": 0.9},
              "head1-1": {"a": 1.2}, "head2-0": {"b": 0.6}}
    for name, vs in rounds.items():
        rows = [{**_row(f"{r}x1x1", v, v), "us": {"generic": 10.0 / v, "torch": 10.0}}
                for r, v in vs.items()]
        (out / f"{name}.json").write_text(json.dumps({"rows": rows}))
    return out


def _record(tmp_path: Path) -> Path:
    record = tmp_path / "record.json"
    record.write_text(json.dumps({"rows": [_row("a", 0.5, 0.5)], "random": [
        {"seed": 7, "rows": [_row("ax1x1", 0.5, 0.5), _row("bx1x1", 0.9, 0.9),
                             _row("cx1x1", 0.7, 0.7)]}]}))
    return record


def test_each_changed_row_takes_the_best_reading_of_the_head_that_launched_it(
        proj: Any, tmp_path: Path) -> None:
    out = _ab(tmp_path)
    # this tree: head1's a and head2's b merged; c as the base launched it
    here = {_name("ax1x1"): [json.loads(_spec(128))], _name("bx1x1"): [json.loads(_spec(32))],
            _name("cx1x1"): [json.loads(_spec(64))]}
    found, unmatched = proj.readings(out, here)
    assert unmatched == [] and set(found) == {_name("ax1x1"), _name("bx1x1")}
    assert found[_name("ax1x1")][0] == "head1" and found[_name("ax1x1")][1]["vs_torch"] == 1.2
    assert found[_name("bx1x1")][0] == "head2"
    report = proj.project(json.loads(_record(tmp_path).read_text()), ["mm"], found)
    # seed 7: a 0.5 -> 1.2 passes, b 0.9 -> 0.6 falls under the floor, c stays 0.7
    assert "| mm | seed 7 | 3 | 0 -> 1 | 0 -> 1 | 2 -> 2 |" in report
    assert ("| mm | seed 7 | ax1x1 float16 contiguous | head1 | 0.50 -> 1.20 | 0.50 -> 1.20 |"
            in report)
    assert "| mm | fixed | 1 | 0 -> 0 |" in report  # a row of another case is left as it was


def test_a_changed_row_no_head_launched_so_is_named_and_fails(
        proj: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _ab(tmp_path)
    here = {_name("ax1x1"): [json.loads(_spec(256))], _name("bx1x1"): [json.loads(_spec(64))],
            _name("cx1x1"): [json.loads(_spec(64))]}
    found, unmatched = proj.readings(out, here)
    assert found == {} and unmatched == [_name("ax1x1")]
    launches = tmp_path / "here.json"
    launches.write_text(json.dumps({row: [json.dumps(s) for s in specs]
                                    for row, specs in here.items()}))
    assert proj.main([str(out), "--results", str(_record(tmp_path)),
                      "--launches", str(launches)]) == 1
    assert "ax1x1 float16 contiguous" in capsys.readouterr().err
    # an A/B folder without launch files is refused with what to do
    (out / "launches-base.json").unlink()
    with pytest.raises(SystemExit, match="ab_rows.py --changed writes them"):
        proj.readings(out, here)


def test_this_trees_launches_are_captured_on_the_cpu(proj: Any, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    # an A/B whose base and head both launched as this tree does: nothing changes, exit 0
    record = tmp_path / "record.json"
    record.write_text(json.dumps({"rows": [_row("73x2047x4096", 0.9, 0.9),
                                           _row("512x512x512", 1.0, 1.0)]}))
    captured = tmp_path / "captured.json"
    proj.ab_rows.capture_launches(record, ["mm"], captured.resolve(), None, "test")
    made = json.loads(captured.read_text())
    assert set(made) == {_name("73x2047x4096"), _name("512x512x512")}
    out = tmp_path / "ab"
    out.mkdir()
    for name in ("base", "head"):
        (out / f"launches-{name}.json").write_text(captured.read_text())
    assert proj.main([str(out), "--results", str(record)]) == 0
    assert "| mm | fixed | 2 | 1 -> 1 | 1 -> 1 | 0 -> 0 |" in capsys.readouterr().out


def test_an_archived_ab_projects_as_its_folder_did(proj: Any, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    import gzip

    out = _ab(tmp_path)
    (out / "ab-head1.json").write_text(json.dumps({"ops": {"mm": {"rows": 1}}}))
    (out / "head1").mkdir()  # a patched tree's copy: left out
    archive = tmp_path / "ab.json.gz"
    tool = load_benchmark("ab_archive")
    assert tool.main([str(out), str(archive), "--note", "test A/B"]) == 0
    with gzip.open(archive, "rt", encoding="utf-8") as f:
        kept = json.load(f)
    assert sorted(kept["rounds"]) == ["base-0", "head1-0", "head1-1", "head2-0"]
    assert sorted(kept["launches"]) == ["base", "head1", "head2"]
    assert kept["ab"] == {"head1": {"ops": {"mm": {"rows": 1}}}} and kept["note"] == "test A/B"
    with pytest.raises(SystemExit):  # an archive is kept, never overwritten
        tool.main([str(out), str(archive), "--note", "again"])
    with pytest.raises(SystemExit, match="no rounds"):
        tool.archive(out / "head1", "")
    launches = tmp_path / "here.json"
    launches.write_text(json.dumps({_name("ax1x1"): [_spec(128)], _name("bx1x1"): [_spec(64)],
                                    _name("cx1x1"): [_spec(64)]}))
    record = _record(tmp_path)
    for source in (out, archive):
        assert proj.main([str(source), "--results", str(record), "--launches",
                          str(launches)]) == 0
        assert "| mm | seed 7 | 3 | 0 -> 1 | 0 -> 1 | 2 -> 1 |" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="not an A/B archive"):
        proj.main([str(record), "--results", str(record), "--launches", str(launches)])


def test_a_later_ab_on_a_base_that_merged_an_earlier_head_projects_with_it(
        proj: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = _ab(tmp_path)
    # the second A/B ran on a base with the first's head1 merged (a at 128) and timed c
    second = tmp_path / "ab2"
    second.mkdir()
    for name, blocks in {"base": {"a": 128, "b": 64, "c": 64},
                         "head": {"a": 128, "b": 64, "c": 16}}.items():
        (second / f"launches-{name}.json").write_text(json.dumps(
            {_name(f"{r}x1x1"): [_spec(b)] for r, b in blocks.items()}))
    for name, vs in {"base-0": {"c": 0.7}, "head-0": {"c": 1.1}, "head-1": {"c": 1.0}}.items():
        rows = [{**_row(f"{r}x1x1", v, v), "us": {"generic": 10.0 / v, "torch": 10.0}}
                for r, v in vs.items()]
        (second / f"{name}.json").write_text(json.dumps({"rows": rows}))
    here = {_name("ax1x1"): [json.loads(_spec(128))], _name("bx1x1"): [json.loads(_spec(64))],
            _name("cx1x1"): [json.loads(_spec(16))]}
    found, unmatched = proj.readings([first, second], here)
    # a changed against the record (the first base) and was timed by the first head1; the
    # second base launched it so too but never timed it: head1's reading stands
    assert unmatched == [] and set(found) == {_name("ax1x1"), _name("cx1x1")}
    assert found[_name("ax1x1")][0] == "ab: head1" and found[_name("ax1x1")][1]["vs_torch"] == 1.2
    assert found[_name("cx1x1")][0] == "ab2: head" and found[_name("cx1x1")][1]["vs_torch"] == 1.1
    # with the second A/B left out, c is a change nobody timed
    assert proj.readings(first, here)[1] == [_name("cx1x1")]
    launches = tmp_path / "here.json"
    launches.write_text(json.dumps({row: [json.dumps(s) for s in specs]
                                    for row, specs in here.items()}))
    assert proj.main([str(first), str(second), "--results", str(_record(tmp_path)),
                      "--launches", str(launches)]) == 0
    # seed 7: a 0.5 -> 1.2 and c 0.7 -> 1.1 pass; b stays 0.9
    assert "| mm | seed 7 | 3 | 0 -> 2 | 0 -> 2 | 2 -> 0 |" in capsys.readouterr().out
