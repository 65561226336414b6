"""`kernels check --compare-to REF` on Triton's interpreter: a head that broke an op is named,
a head that behaves like its base passes. The repository is a real git repository."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from flagbot.kernels import compare, gates
from flagbot.kernels.cli import main
from flagbot.kernels.compare import CompareError, extract

ROOT = Path(__file__).resolve().parents[2]
SILU = Path("backends/_template/ops/silu.py")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c",
                           "user.email=t@example.com", "-c", "commit.gpgsign=false", *args],
                          check=True, capture_output=True, text=True).stdout


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    """A repository whose first commit holds the template backend (tag `base`)."""
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "backends" / "_template", repo / "backends" / "_template")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    _git(repo, "tag", "base")
    return repo


def _commit(repo: Path, old: str, new: str) -> None:
    path = repo / SILU
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    _git(repo, "commit", "-q", "-am", "change")


def _check(repo: Path, tmp_path: Path) -> tuple[int, dict]:
    out = tmp_path / "r.json"
    code = main(["check", "--backend", str(repo / "backends" / "_template"), "--compare-to",
                 "base", "--shapes", "ci", "--seeds", "1", "--dtypes", "fp32", "--json",
                 str(out)])
    return code, json.loads(out.read_text())


def test_a_commit_that_breaks_an_op_is_named(repo: Path, tmp_path: Path) -> None:
    _commit(repo, "y = (x / (1.0 + tl.exp(-x)))", "y = (1.01 * x / (1.0 + tl.exp(-x)))")
    code, doc = _check(repo, tmp_path)
    [op] = doc["ops"]
    assert code == 1
    assert op["compare"]["status"] == "regression"
    assert op["compare"]["reason"] == "regression: accurate at base, inaccurate now"
    assert doc["compare"]["sha"] == _git(repo, "rev-parse", "base").strip()


def test_a_head_that_behaves_like_its_base_passes(repo: Path, tmp_path: Path) -> None:
    _commit(repo, "def silu(x):", "def silu(x):  # reworded, same kernel\n    ")
    code, doc = _check(repo, tmp_path)
    [op] = doc["ops"]
    assert code == 0, op["verdict"]
    # Timed on a GPU, the same kernel may read a little faster or slower, never a regression.
    assert op["compare"]["status"] in (("same",) if doc["environment"]["device"] is None else
                                       ("same", "faster", "slower within noise"))
    # The working tree was never touched by reading the base.
    assert "reworded" in (repo / SILU).read_text()


def test_unknown_ref_is_a_usage_error(repo: Path, tmp_path: Path) -> None:
    code = main(["check", "--backend", str(repo / "backends" / "_template"), "--compare-to",
                 "no-such-ref", "--shapes", "ci", "--seeds", "1"])
    assert code == 2
    with pytest.raises(CompareError, match="not inside a git repository"):
        extract(ROOT.parent / "not-a-repo-anywhere", "HEAD", tmp_path)


def _r(median: float, spread: float = 0.01) -> gates.Ratio:
    return gates.Ratio(median, median * (1 - spread), median * (1 + spread))


@pytest.mark.parametrize(("ratios", "status"), [
    ([_r(0.77), _r(0.75)], "regression"),  # head ~30 % slower
    ([_r(1.0), _r(0.99)], "same"),
    ([_r(0.97), _r(0.96)], "same"),  # within the 5 % tolerance
    ([_r(0.93, 0.05)], "slower within noise"),  # band 0.88-0.98 reaches past 0.95
    ([_r(0.90, 0.2)], "slower within noise"),  # band reaches 1.0
    ([_r(1.3)], "faster"),
    ([_r(1.06, 0.05)], "same"),  # faster, but the band reaches back under 1.05
])
def test_compare_verdict_on_speed(ratios: list[gates.Ratio], status: str) -> None:
    v = gates.compare_verdict(True, True, ratios, gates.Thresholds(), "base")
    assert v.status == status, v.reason


def test_compare_verdict_on_accuracy() -> None:
    t = gates.Thresholds()
    assert gates.compare_verdict(False, True, None, t, "r").status == "regression"
    assert gates.compare_verdict(False, False, None, t, "r").status == "not compared"
    assert gates.compare_verdict(True, None, None, t, "r").status == "new"


def _tar(*names: str) -> tarfile.TarFile:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name in names:
            info = tarfile.TarInfo(name)
            info.size = 2
            tar.addfile(info, io.BytesIO(b"ok"))
    buf.seek(0)
    return tarfile.open(fileobj=buf)


@pytest.mark.parametrize("filters", [True, False], ids=["data-filter", "no-filters"])
def test_the_base_archive_never_lands_outside_its_folder(filters: bool, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # Pythons before 3.11.4 have no extraction filters: the same refusals by hand
    if not filters:
        monkeypatch.delattr(tarfile, "data_filter", raising=False)
    dest = tmp_path / "out"
    dest.mkdir()
    compare._extract_data(_tar("backends/x.py"), dest)
    assert (dest / "backends" / "x.py").read_bytes() == b"ok"
    with pytest.raises(compare.CompareError, match="outside|safely"):
        compare._extract_data(_tar("../evil.py"), dest)
    assert not (tmp_path / "evil.py").exists()
    outside = tmp_path / "abs-evil.py"
    try:  # an absolute name: refused, or (the data filter) made relative
        compare._extract_data(_tar(str(outside)), dest)
    except compare.CompareError:
        pass
    assert not outside.exists()
