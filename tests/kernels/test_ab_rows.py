"""benchmarks/ab_rows.py, head vs base on one device: the head tree is the patched copy and is
what `flagbot.kernels` imports under its site folder (the base tree untouched); the rows are the
slow ones plus guards, re-timed under their own keys; a failed bench or patch says so."""

from __future__ import annotations

import difflib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .benchmarks_support import load_benchmark

RECORD = (Path(__file__).resolve().parents[2] / "benchmarks" / "results"
          / "kernels-h100-2026-11-27-rules4.json.gz")


@pytest.fixture(scope="module")
def ab() -> Any:
    return load_benchmark("ab_rows")


def _tree(root: Path, value: str) -> None:
    (root / "flagbot").mkdir(parents=True)
    (root / "flagbot" / "__init__.py").write_text('"""stand-in"""\n')
    for name in ("kernels", "hooks", "bot"):
        (root / name).mkdir()
        (root / name / "__init__.py").write_text("")
    (root / "kernels" / "knob.py").write_text(f"VALUE = {value!r}\n")


def _patch(old: str, new: str, path: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                        f"a/{path}", f"b/{path}"))


def test_the_head_tree_is_the_patched_copy_and_imports_as_flagbot(ab: Any, tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _tree(root, "base")
    patch = tmp_path / "x.patch"
    patch.write_text(_patch("VALUE = 'base'\n", "VALUE = 'head'\n", "kernels/knob.py"))
    site = ab.build_head(patch, tmp_path / "ab", root=root)
    probe = "import flagbot.kernels.knob as k; print(k.VALUE, k.__file__)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(site)), check=True, timeout=60,
                          cwd=tmp_path)  # not the checkout, whose own flagbot/ would come first
    value, where = done.stdout.split()
    assert value == "head" and where.startswith(str(site))
    assert (root / "kernels" / "knob.py").read_text() == "VALUE = 'base'\n"  # base untouched


def test_a_patch_that_does_not_apply_is_refused_with_the_reason(ab: Any, tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _tree(root, "base")
    patch = tmp_path / "x.patch"
    patch.write_text(_patch("VALUE = 'other'\n", "VALUE = 'head'\n", "kernels/knob.py"))
    with pytest.raises(SystemExit, match="does not apply"):
        ab.build_head(patch, tmp_path / "ab", root=root)


def _row(key: str, op: str, case: str, vs: float, dev: float, us: float = 10.0) -> dict[str, Any]:
    return {"key": key, "op": op, "case": case, "dtype": "float16", "layout": "contiguous",
            "vs_torch": vs, "device_vs_torch": dev, "of_copy": 0.1, "accuracy": "ok",
            "us": {"generic": us, "torch": us * vs}, "device_us": {"generic": us,
                                                                 "torch": us * dev}}


def _id(case: str) -> str:
    return f"add {case} float16 contiguous"


def test_slow_rows_and_guards_are_retimed_under_their_keys(ab: Any) -> None:
    result = {"rows": [_row("fixed:0", "add", "100", 1.0, 1.0)],
              "random": [{"seed": 11, "count": 200, "rows": [
                  _row("random:11:0", "add", "7x9", 0.5, 1.0),  # slow launch-inclusive
                  _row("random:11:1", "add", "8x9", 1.0, 0.9),  # slow on device only
                  *[_row(f"random:11:{i}", "add", f"{i}x3", 1.1, 1.1) for i in range(2, 12)],
                  _row("random:11:12", "mul", "5", 0.2, 0.2)]}]}
    rows = ab.bench_kernels.sweep_pool.all_rows(result)
    slow, guards = ab.pick_rows(rows, ["add"], 0.95, 3)
    assert [r["key"] for r in slow] == ["random:11:0", "random:11:1"]
    assert len(guards) == 3 and not {r["key"] for r in guards} & {r["key"] for r in slow}
    args = ab.bench_args(result, slow + guards, ["add"])
    cases = args[args.index("--cases") + 1].split(",")
    assert "7x9" in cases and "8x9" in cases and "5" not in cases
    assert args[args.index("--seed") + 1] == "11" and "--no-flaggems" in args
    shapes = args[args.index("--shapes") + 1]
    assert shapes == ("fixed,random:200" if any(r["key"] == "fixed:0" for r in guards)
                      else "random:200")


def test_the_comparison_keeps_each_variants_best_round_and_lists_moved_rows(ab: Any) -> None:
    def run(us: dict[str, float]) -> dict[str, Any]:
        return {"rows": [], "random": [{"seed": 1, "count": 2, "rows": [
            _row(k, "add", k, 1.0 * 10 / v, 1.0 * 10 / v, v) for k, v in us.items()]}]}

    ids = {_id("a"), _id("b"), _id("c")}
    base = ab.best_of([run({"a": 10, "b": 10, "c": 30}), run({"a": 12, "b": 9, "c": 10})], ids)
    head = ab.best_of([run({"a": 5, "b": 9.2, "c": 10})], ids)
    assert base[_id("b")]["us"]["generic"] == 9 and base[_id("c")]["us"]["generic"] == 10
    out = ab.compare(base, head)
    assert [m["key"] for m in out["moved"]] == [_id("a")] and out["moved"][0]["speedup"] == 2.0
    assert out["ops"]["add"]["rows"] == 3
    assert "2.00x" in ab.report(out) and "failed" not in ab.report(out)


def test_rows_the_head_breaks_are_reported_not_dropped(ab: Any) -> None:
    good = _row("random:1:0", "add", "5", 1.0, 1.0)
    wrong = {**_row("random:1:1", "add", "6", 1.0, 1.0), "accuracy": "FAIL (max abs 3)"}
    crashed = {"key": "random:1:2", "op": "add", "case": "7", "dtype": "float16",
               "layout": "contiguous", "error": "RuntimeError: boom"}
    base_run = {"rows": [], "random": [{"seed": 1, "count": 3, "rows": [
        good, _row("random:1:1", "add", "6", 1.0, 1.0), _row("random:1:2", "add", "7", 1, 1)]}]}
    head_run = {"rows": [], "random": [{"seed": 1, "count": 3, "rows": [good, wrong, crashed]}]}
    keys = {_id("5"), _id("6"), _id("7")}
    failed = {"base": ab.broken([base_run], keys), "head": ab.broken([head_run], keys)}
    assert failed == {"base": {}, "head": {_id("6"): "FAIL (max abs 3)",
                                           _id("7"): "RuntimeError: boom"}}
    out = ab.compare(ab.best_of([base_run], keys), ab.best_of([head_run], keys), failed)
    assert out["failed"]["head"] == failed["head"]
    text = ab.report(out)
    assert "**head failed 2 row(s):**" in text and "RuntimeError: boom" in text
    # a row measured on one side only counts as failed on the other
    alone = ab.compare(ab.best_of([base_run], keys), {})
    assert set(alone["failed"]["head"]) == keys


def test_a_failing_bench_is_reported_and_nothing_compared(ab: Any, tmp_path: Path) -> None:
    bench = tmp_path / "bench.py"
    bench.write_text("import sys\nprint('no device here', file=sys.stderr)\nsys.exit(2)\n")
    with pytest.raises(SystemExit, match="base-0 exited 2"):
        ab.run_variant("base-0", [], tmp_path, None, bench)


def test_dry_run_on_the_record(ab: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
                               ) -> None:
    host = Path(ab.ROOT) / "kernels" / "ops" / "_host.py"
    text = host.read_text(encoding="utf-8")
    patch = tmp_path / "comment.patch"
    patch.write_text(_patch(text, text + "# a comment\n", "kernels/ops/_host.py"))
    assert ab.main([str(patch), "--results", str(RECORD), "--ops", "mul", "--guards", "5",
                    "--out", str(tmp_path / "out"), "--dry-run"]) == 0
    said = capsys.readouterr().err
    assert "rows under 0.95x torch and 5 guards" in said and "16x1025x3027[broadcast=2]" in said
    assert (tmp_path / "out" / "head" / "tree" / "kernels" / "ops" / "_host.py").read_text(
        encoding="utf-8").endswith("# a comment\n")
    assert host.read_text(encoding="utf-8") == text
    with pytest.raises(SystemExit):
        ab.main([str(tmp_path / "missing.patch"), "--results", str(RECORD)])


def _slow_and_passing(tmp_path: Path) -> tuple[dict[str, Any], Path]:
    """A record of two add rows, one at 0.5x torch and one passing, and its file."""
    record = {"rows": [], "random": [{"seed": 3, "count": 2, "rows": [
        _row("random:3:0", "add", "9x7", 0.5, 0.5, us=20.0),
        _row("random:3:1", "add", "9x8", 1.2, 1.2)]}]}
    results = tmp_path / "record.json"
    results.write_text(json.dumps(record))
    return record, results


def _host_patch(ab: Any, path: Path, comment: str) -> Path:
    """A patch at `path` that adds `comment` to the end of kernels/ops/_host.py."""
    text = (Path(ab.ROOT) / "kernels" / "ops" / "_host.py").read_text(encoding="utf-8")
    path.write_text(_patch(text, text + comment, "kernels/ops/_host.py"))
    return path


@pytest.mark.parametrize("head_breaks", [False, True])
def test_main_compares_the_rounds_and_exits_1_where_the_head_breaks_rows(
        ab: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], head_breaks: bool) -> None:
    # bench_kernels needs an accelerator; here each variant's run is the recorded result it
    # would write (the head twice as fast on the slow row, or failing it)
    record, results = _slow_and_passing(tmp_path)
    patch = _host_patch(ab, tmp_path / "comment.patch", "# a comment\n")
    runs: list[str] = []

    def recorded(name: str, extra: list[str], out: Path, site: Path | None,
                 bench: Path) -> dict[str, Any]:
        runs.append(name)
        assert (site is None) == name.startswith("base")
        # a sweep cut down with --cases numbers its rows afresh: keys differ from the record's
        rows = [{**r, "key": f"random:3:{i + 7}"} for i, r in enumerate(record["random"][0]["rows"])]
        if name.startswith("head"):
            rows[0] = ({**rows[0], "accuracy": "FAIL (nan)"} if head_breaks
                       else _row("random:3:7", "add", "9x7", 1.0, 1.0, us=10.0))
        done = {"rows": [], "random": [{"seed": 3, "count": 2, "rows": rows}]}
        (out / f"{name}.json").write_text(json.dumps(done))
        return done

    monkeypatch.setattr(ab, "run_variant", recorded)
    code = ab.main([str(patch), "--results", str(results), "--ops", "add", "--guards", "1",
                    "--out", str(tmp_path / "out")])
    assert runs == ["base-0", "head-0", "base-1", "head-1"]
    said = capsys.readouterr()
    saved = json.loads((tmp_path / "out" / "ab.json").read_text())
    if head_breaks:
        assert code == 1 and "breaks them" in said.err
        assert saved["failed"]["head"] == {_id("9x7"): "FAIL (nan)"}
    else:
        assert code == 0 and saved["ops"]["add"] == {
            "rows": 2, "base": 1, "head": 2, "base_device": 1, "head_device": 2}
        assert [m["key"] for m in saved["moved"]] == [_id("9x7")]
    # --again times nothing: it compares the rounds left in --out
    monkeypatch.setattr(ab, "run_variant", None)
    assert ab.main([str(patch), "--results", str(results), "--ops", "add", "--guards", "1",
                    "--out", str(tmp_path / "out"), "--again"]) == code
    assert json.loads((tmp_path / "out" / "ab.json").read_text()) == saved
    with pytest.raises(SystemExit):
        ab.main([str(patch), "--results", str(results), "--out", str(tmp_path / "empty"),
                 "--again"])


def test_several_patches_are_heads_timed_beside_one_base(
        ab: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # two candidate changes in one run: each its own patched tree, both timed in every round
    # after the one base; each judged against that base, and the run exits 1 because the
    # second breaks a row (the first's report still stands)
    record, results = _slow_and_passing(tmp_path)
    patches = [_host_patch(ab, tmp_path / f"p{i}.patch", f"# change {i}\n") for i in (1, 2)]
    runs: list[tuple[str, Path | None]] = []

    def recorded(name: str, extra: list[str], out: Path, site: Path | None,
                 bench: Path) -> dict[str, Any]:
        runs.append((name, site))
        rows = [dict(r) for r in record["random"][0]["rows"]]
        if name.startswith("head1"):
            rows[0] = _row("random:3:0", "add", "9x7", 1.0, 1.0, us=10.0)
        if name.startswith("head2"):
            rows[1] = {**rows[1], "accuracy": "FAIL (nan)"}
        done = {"rows": [], "random": [{"seed": 3, "count": 2, "rows": rows}]}
        (out / f"{name}.json").write_text(json.dumps(done))
        return done

    monkeypatch.setattr(ab, "run_variant", recorded)
    out = tmp_path / "out"
    args = [*map(str, patches), "--results", str(results), "--ops", "add", "--guards", "1",
            "--out", str(out)]
    assert ab.main(args) == 1
    assert [name for name, _ in runs] == ["base-0", "head1-0", "head2-0", "base-1", "head1-1",
                                          "head2-1"]
    for name, site in runs:
        if name.startswith("head"):
            assert site == out / name[:5] / "site"
            patched = (out / name[:5] / "tree" / "kernels" / "ops" / "_host.py").read_text()
            assert patched.endswith(f"# change {name[4]}\n")
    first = json.loads((out / "ab-head1.json").read_text())
    second = json.loads((out / "ab-head2.json").read_text())
    assert [m["key"] for m in first["moved"]] == [_id("9x7")] and not first["failed"]["head"]
    assert second["failed"]["head"] == {_id("9x8"): "FAIL (nan)"} and not second["moved"]
    said = capsys.readouterr()
    assert f"## head1: {patches[0]}" in said.out and f"## head2: {patches[1]}" in said.out
    assert "head2" in said.err and "breaks" in said.err and "head1 (" not in said.err
    # --again compares the rounds left for every head, none built again
    monkeypatch.setattr(ab, "run_variant", None)
    monkeypatch.setattr(ab, "build_head", None)
    (out / "ab-head1.json").unlink()
    assert ab.main([*args, "--again"]) == 1
    assert json.loads((out / "ab-head1.json").read_text()) == first


def test_a_bench_that_exits_1_for_rows_below_target_still_counts(ab: Any, tmp_path: Path
                                                                 ) -> None:
    # bench_kernels exits 1 when rows miss the target: that is a finished sweep to compare
    bench = tmp_path / "bench.py"
    bench.write_text("import json, sys\n"
                     "open(sys.argv[sys.argv.index('--json') + 1], 'w').write("
                     "json.dumps({'rows': [], 'random': []}))\nsys.exit(1)\n")
    assert ab.run_variant("base-0", [], tmp_path, None, bench) == {"rows": [], "random": []}


def test_also_adds_the_named_cases_as_guards_and_refuses_unknown_ones(
        ab: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    host = Path(ab.ROOT) / "kernels" / "ops" / "_host.py"
    text = host.read_text(encoding="utf-8")
    patch = tmp_path / "comment.patch"
    patch.write_text(_patch(text, text + "# a comment\n", "kernels/ops/_host.py"))
    base = [str(patch), "--results", str(RECORD), "--ops", "mm", "--guards", "0", "--below",
            "0.5", "--out", str(tmp_path / "out"), "--dry-run"]
    assert ab.main(base) == 0
    assert "106x256x14914" not in capsys.readouterr().err  # a passing row (1.04x torch)
    assert ab.main([*base, "--also", "106x256x14914"]) == 0
    said = capsys.readouterr().err
    assert "and 1 guards" in said and "106x256x14914" in said
    with pytest.raises(SystemExit):
        ab.main([*base, "--also", "7x7x7"])


def test_changed_adds_the_rows_whose_launches_the_patch_changes(
        ab: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a patch that stops 16-bit products of over 64 rows from splitting K: of three mm rows,
    # only the one the rule split (73x2047x4096: 32 tiles) launches differently; ptx_audit
    # finds that in both trees on the CPU
    rules = Path(ab.ROOT) / "kernels" / "ops" / "mm.py"
    text = rules.read_text(encoding="utf-8")
    assert "\nSPLIT_MIN_K = 1024 " in text
    patch = tmp_path / "nosplit.patch"
    patch.write_text(_patch(text, text.replace("\nSPLIT_MIN_K = 1024 ", "\nSPLIT_MIN_K = 1 << 30 "),
                            "kernels/ops/mm.py"))
    results = tmp_path / "record.json"
    results.write_text(json.dumps({"rows": [
        _row("fixed:0", "mm", "73x2047x4096", 1.0, 1.0), _row("fixed:1", "mm", "512x512x512", 1.0, 1.0),
        _row("fixed:2", "mm", "2048x2048x64", 1.0, 1.0), _row("fixed:3", "add", "9x7", 1.0, 1.0)]}))
    base = [str(patch), "--results", str(results), "--ops", "mm", "--guards", "0", "--below", "0",
            "--out", str(tmp_path / "out"), "--dry-run"]
    assert ab.main([*base, "--changed"]) == 0
    said = capsys.readouterr().err
    assert "changes the launches of 1 rows; 1 more re-timed" in said
    assert "--cases 73x2047x4096 " in said
    made = json.loads((tmp_path / "out" / "launches-head.json").read_text())
    assert set(made) == {"mm 73x2047x4096 float16 contiguous", "mm 512x512x512 float16 contiguous",
                         "mm 2048x2048x64 float16 contiguous"}
    # without --changed, nothing under 0x torch and no guards: no rows at all
    with pytest.raises(SystemExit):
        ab.main(base)


def _changed(ab: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
             made: dict[str, dict[str, list[str]]]) -> set[str]:
    """changed_rows with each tree's capture answered by `made` (base and head launches)."""
    def fake_run(cmd: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        target = Path(cmd[cmd.index("--launches") + 1])
        target.write_text(json.dumps(made["head" if "head" in str(target) else "base"]))
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr(ab.subprocess, "run", fake_run)
    (tmp_path / "head").mkdir()
    found: set[str] = ab.changed_rows(tmp_path / "r.json", ["mm"], tmp_path,
                                      tmp_path / "head" / "site")
    return found


def test_changed_leaves_out_constants_only_one_tree_has(ab: Any, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # a kernel that gains a constant in the head (a bound it states) changes no row by that
    # alone; a row whose tile changes is still found
    def spec(block: int, **extra: int) -> str:
        return json.dumps({"kernel": "m:k", "warps": 4, "constexprs": {"BLOCK": block, **extra}},
                          sort_keys=True)

    made = {"base": {"a": [spec(64)], "b": [spec(64)]},
            "head": {"a": [spec(64, ALIGN=8)], "b": [spec(128, ALIGN=8)]}}

    assert _changed(ab, tmp_path, monkeypatch, made) == {"b"}


def test_changed_leaves_out_arguments_only_one_tree_has(ab: Any, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # a kernel that gains a buffer argument in the head changes no row by that alone; a row
    # whose shared argument changes type or divisibility is still found
    def spec(c_type: str, divisible: list[str], **extra: str) -> str:
        return json.dumps({"kernel": "m:k", "warps": 4, "constexprs": {"BLOCK": 64},
                           "types": {"c_ptr": c_type, **extra},
                           "divisible": divisible}, sort_keys=True)

    made = {"base": {"a": [spec("*fp16", ["K"])], "b": [spec("*fp16", ["K"])],
                     "c": [spec("*fp16", ["K"])]},
            "head": {"a": [spec("*fp16", ["K", "n_out"], out_ptr="*i32")],
                     "b": [spec("*fp32", ["K"], out_ptr="*i32")],
                     "c": [spec("*fp16", [], out_ptr="*i32")]}}

    assert _changed(ab, tmp_path, monkeypatch, made) == {"b", "c"}


def test_a_second_head_compares_against_the_base_launches_captured_once(
        ab: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def spec(block: int) -> str:
        return json.dumps({"kernel": "m:k", "warps": 4, "constexprs": {"BLOCK": block}},
                          sort_keys=True)

    (tmp_path / "launches-base.json").write_text(json.dumps({"a": [spec(64)], "b": [spec(64)]}))
    captured: list[str] = []

    def fake_run(cmd: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        target = Path(cmd[cmd.index("--launches") + 1])
        captured.append(target.name)
        target.write_text(json.dumps({"a": [spec(128)], "b": [spec(64)]}))
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr(ab.subprocess, "run", fake_run)
    (tmp_path / "head2").mkdir()
    found = ab.changed_rows(tmp_path / "r.json", ["mm"], tmp_path, tmp_path / "head2" / "site",
                            "head2", base_captured=True)
    assert found == {"a"} and captured == ["launches-head2.json"]


def test_again_judges_a_merged_patch_from_the_launches_the_run_left(
        ab: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # --again builds no head tree and captures nothing: with --changed it reads the launch
    # files the timed run wrote, so a patch that no longer applies (merged since) still works
    def spec(block: int) -> str:
        return json.dumps({"kernel": "m:k", "warps": 4, "constexprs": {"BLOCK": block}},
                          sort_keys=True)

    out = tmp_path / "out"
    out.mkdir()
    (out / "launches-base.json").write_text(json.dumps({"a": [spec(64)], "b": [spec(64)]}))
    (out / "launches-head.json").write_text(json.dumps({"a": [spec(64)], "b": [spec(128)]}))

    def no_subprocess(*_: Any, **__: Any) -> None:
        raise AssertionError("nothing is run again")

    monkeypatch.setattr(ab.subprocess, "run", no_subprocess)
    assert ab.changed_rows(tmp_path / "r.json", ["mm"], out, None) == {"b"}
    (out / "launches-head.json").unlink()
    with pytest.raises(SystemExit, match="launches-head.json is missing"):
        ab.changed_rows(tmp_path / "r.json", ["mm"], out, None)
    # and main() under --again never applies the patch
    record = {"rows": [_row("fixed:0", "add", "9x7", 0.5, 0.5)]}
    results = tmp_path / "record.json"
    results.write_text(json.dumps(record))
    for name, generic in (("base-0", 20.0), ("head-0", 10.0)):
        (out / f"{name}.json").write_text(json.dumps(
            {"rows": [_row("fixed:9", "add", "9x7", 0.5, 0.5, us=generic)], "random": []}))
    junk = tmp_path / "merged.patch"
    junk.write_text("--- a/nowhere.py\n+++ b/nowhere.py\n@@ -1 +1 @@\n-x\n+y\n")
    monkeypatch.setattr(ab, "build_head", None)
    assert ab.main([str(junk), "--results", str(results), "--ops", "add", "--guards", "0",
                    "--out", str(out), "--again"]) == 0
    assert [m["shape"] for m in json.loads((out / "ab.json").read_text())["moved"]] == [
        "9x7 float16 contiguous"]
