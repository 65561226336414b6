"""New versus inherited findings: the matcher, the scratch tree of a ref, `--since` on every check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flagbot.hooks import check_hetero, check_patches, check_routing
from flagbot.hooks import check_vendor_backend as cvb
from flagbot.hooks.findings import ERROR, WARNING, Finding
from flagbot.hooks.since import FindingsCache, findings_at, split_new
from testing.backend_corpus import FLAGGEMS_ROOT, build_clean

from .conftest import MakeRepo, Repo

ACME_INIT = f"{FLAGGEMS_ROOT}/_acme/__init__.py"


def f(line: int, message: str = "m", rule: str = "r", path: str = "a.py") -> Finding:
    return Finding(path, line, ERROR, rule, message)


def test_moved_finding_is_inherited() -> None:
    new, inherited = split_new([f(3)], [f(9)])
    assert new == [] and inherited == [f(9)]


def test_an_added_duplicate_is_the_new_one() -> None:
    new, inherited = split_new([f(10)], [f(4), f(10)])
    assert new == [f(4)] and inherited == [f(10)]


def test_line_numbers_inside_messages_do_not_make_a_finding_new() -> None:
    new, _ = split_new([f(8, "x listed twice (first at line 3)")], [f(12, "x listed twice (first at line 7)")])
    assert new == []


@pytest.mark.parametrize("changed", [{"rule": "other"}, {"path": "b.py"}, {"message": "n"}])
def test_rule_file_and_message_must_all_match(changed: dict[str, str]) -> None:
    head = f(**{"line": 3, **changed})  # type: ignore[arg-type]
    assert split_new([f(3)], [head]) == ([head], [])


def backend_repo(make_repo: MakeRepo, unused: str) -> Repo:
    repo = make_repo("since-backend")
    build_clean(repo.path, context=True)  # in a FlagGems tree: an unknown unused op is an error
    init = repo.path / ACME_INIT
    init.write_text(init.read_text().replace('("cumsum",)', unused))
    repo.commit("base")
    return repo


def test_findings_at_checks_the_ref_and_leaves_the_checkout_alone(make_repo: MakeRepo) -> None:
    repo = backend_repo(make_repo, '("cumsum", "bogus_op")')
    base = repo.rev("HEAD")
    (repo.path / ACME_INIT).write_text("broken(\n")  # uncommitted edit
    before = repo.snapshot()
    found = findings_at(repo.path, base, lambda root: cvb.check_backends(root, None, root=FLAGGEMS_ROOT))
    assert [x.rule for x in found] == ["unused-unknown"] and "bogus_op" in found[0].message
    assert repo.snapshot() == before


def test_cache_reuses_a_tree_once_checked(make_repo: MakeRepo, tmp_path: Path) -> None:
    repo = backend_repo(make_repo, '("cumsum", "bogus_op")')
    calls: list[Path] = []

    def check(root: Path) -> list[Finding]:
        calls.append(root)
        return cvb.check_backends(root, None, root=FLAGGEMS_ROOT)

    first = findings_at(repo.path, "HEAD", check, key="b", cache=FindingsCache(tmp_path / "c"))
    again = findings_at(repo.path, "HEAD", check, key="b", cache=FindingsCache(tmp_path / "c"))
    assert len(calls) == 1 and again == first and first


def test_check_backend_since_passes_on_inherited_errors_and_fails_on_a_new_one(
        make_repo: MakeRepo, capsys: pytest.CaptureFixture[str]) -> None:
    repo = backend_repo(make_repo, '("cumsum", "bogus_op")')
    init = repo.path / ACME_INIT
    init.write_text("# moved down\n# by two lines\n" + init.read_text())
    repo.commit("unrelated edit above the old finding")
    assert cvb.main(["--all", "--since", "HEAD~1", "--format", "json"], cwd=str(repo.path)) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["errors"] == 0 and doc["inherited"] == 1
    assert [(x["rule"], x["new"]) for x in doc["findings"]] == [("unused-unknown", False)]
    init.write_text(init.read_text().replace('"bogus_op")', '"bogus_op", "cumsun")'))
    assert cvb.main(["--all", "--since", "HEAD"], cwd=str(repo.path)) == 1
    out = capsys.readouterr().out
    assert "'cumsun'" in out and "bogus_op" not in out and "1 inherited from HEAD" in out


def test_check_backend_since_a_ref_without_the_folder_reports_everything_new(
        make_repo: MakeRepo, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo("since-new-vendor")
    repo.write("README.md", "x\n")
    repo.commit("empty")
    build_clean(repo.path, context=True)
    init = repo.path / ACME_INIT
    init.write_text(init.read_text().replace('("cumsum",)', '("nope",)'))
    assert cvb.main([f"{FLAGGEMS_ROOT}/_acme", "--since", "HEAD"], cwd=str(repo.path)) == 1
    assert "'nope'" in capsys.readouterr().out


def test_check_backend_since_an_unknown_ref_is_a_usage_error(make_repo: MakeRepo) -> None:
    repo = backend_repo(make_repo, '("cumsum",)')
    assert cvb.main(["--all", "--since", "no-such-ref"], cwd=str(repo.path)) == 2


ROUTING = "# routing\nadd.Tensor = flagos\nmul.Tensor = nosuchbackend\n"


def test_check_routing_since(make_repo: MakeRepo, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo("since-routing")
    repo.write("backends.conf", ROUTING)
    repo.commit("base")
    repo.write("backends.conf", "# a new header line\n" + ROUTING)
    repo.commit("moved")
    args = ["backends.conf", "--no-kernels", "--since", "HEAD~1"]
    assert check_routing.main(args, cwd=str(repo.path)) == 0
    assert "0 new error(s)" in capsys.readouterr().out
    repo.write("backends.conf", ROUTING + "sub.Tensor = typo_backend\n")
    assert check_routing.main(args, cwd=str(repo.path)) == 1
    out = capsys.readouterr().out
    assert "typo_backend" in out and "nosuchbackend" not in out


def test_check_patches_since_keeps_an_old_broken_patch_inherited(
        make_repo: MakeRepo, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo("since-patches")
    repo.write("hardwares/A_X100/aaaaaaaa/aaaaaaaa.patch", "not a patch\n")
    repo.commit("a broken stored patch")
    assert check_patches.main(["--layout-only"], cwd=str(repo.path)) == 1
    capsys.readouterr()
    assert check_patches.main(["--layout-only", "--since", "HEAD"], cwd=str(repo.path)) == 0
    repo.write("hardwares/B_Y100/bbbbbbbb/bbbbbbbb.patch", "also not a patch\n")
    capsys.readouterr()
    assert check_patches.main(["--layout-only", "--since", "HEAD", "--format", "json"],
                              cwd=str(repo.path)) == 1
    doc = json.loads(capsys.readouterr().out)
    assert {x["path"].split("/")[1] for x in doc["findings"] if x["new"]} == {"B_Y100"}


def test_hetero_check_since(make_repo: MakeRepo, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo("since-hetero")
    repo.write("hardwares/hetero.txt", "aaaaaaaa: A_X100\n")
    repo.commit("hetero lists a device without its patch")
    assert check_hetero.hetero_main(["check"], cwd=str(repo.path)) == 1
    assert check_hetero.hetero_main(["check", "--since", "HEAD"], cwd=str(repo.path)) == 0
    repo.write("hardwares/hetero.txt", "aaaaaaaa: A_X100\nbbbbbbbb: B_Y100\n")
    capsys.readouterr()
    assert check_hetero.hetero_main(["check", "--since", "HEAD", "--json"], cwd=str(repo.path)) == 1
    doc = json.loads(capsys.readouterr().out)
    assert all(("bbbbbbbb" in x["message"]) == x["new"] for x in doc["findings"])
    assert doc["inherited"] >= 1


def test_warnings_only_never_fail_a_since_run() -> None:
    new, _ = split_new([], [Finding("a", 1, WARNING, "w", "m")])
    assert new and all(x.severity == WARNING for x in new)


def test_since_from_a_sub_folder_checks_the_same_sub_folder(
        make_repo: MakeRepo, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo("since-subdir")
    repo.write("plugin/backends.conf", ROUTING)
    repo.commit("base")
    repo.write("plugin/backends.conf", ROUTING + "sub.Tensor = typo_backend\n")
    args = ["backends.conf", "--no-kernels", "--since", "HEAD", "--format", "json"]
    assert check_routing.main(args, cwd=str(repo.path / "plugin")) == 1
    doc = json.loads(capsys.readouterr().out)
    assert [(x["line"], x["new"]) for x in doc["findings"]] == [(4, True), (3, False)]


def test_cache_entries_are_per_key_and_a_damaged_one_is_a_miss(tmp_path: Path) -> None:
    cache = FindingsCache(tmp_path)
    long = "k" * 200
    cache.put("ab" * 20, long + "1", [f(1)])
    cache.put("ab" * 20, long + "2", [f(2)])
    fresh = FindingsCache(tmp_path)  # a new process: from the folder, not memory
    assert fresh.get("ab" * 20, long + "1") == [f(1)] and fresh.get("ab" * 20, long + "2") == [f(2)]
    for entry in tmp_path.rglob("*.json"):
        entry.write_text("{not json")
    assert FindingsCache(tmp_path).get("ab" * 20, long + "1") is None
