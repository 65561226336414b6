"""The install instructions work before any release: pip from the git repository at a commit,
and no page points at a PyPI package or a version tag that does not exist yet."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PIP_INSTALL = re.compile(r"pip install(?: -\S+)* ('[^']*'|\"[^\"]*\"|\S+)")
TAG_REV = re.compile(r"rev: v\d")


def from_pypi(text: str) -> list[str]:
    """`pip install flagbot` / `pip install 'flagbot[bot]'`: from PyPI, where no release is yet."""
    found = (m.group(1).strip("'\"`") for m in PIP_INSTALL.finditer(text))
    return [req for req in found if re.fullmatch(r"flagbot(\[[a-z,]+\])?", req)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_page_installs_a_release_that_does_not_exist(page: Path) -> None:
    if page.name == "install.md":  # which says that these do not work yet
        return
    text = page.read_text(encoding="utf-8")
    assert from_pypi(text) == [] and not TAG_REV.search(text)


def test_the_check_finds_a_pypi_install() -> None:
    assert from_pypi("run `pip install flagbot` or pip install -q 'flagbot[bot]'") == [
        "flagbot", "flagbot[bot]"]
    assert from_pypi("pip install 'flagbot[bot] @ git+https://github.com/ORG/flagbot@COMMIT'") == []


def test_the_install_page_is_linked_from_the_guides() -> None:
    for name in ("vendors.md", "maintainers.md", "bot.md", "kernels.md", "hooks.md"):
        assert "install.md" in (ROOT / "docs" / name).read_text(encoding="utf-8"), name


@pytest.mark.slow
def test_pip_installs_flagbot_from_a_git_url_at_a_commit(tmp_path: Path) -> None:
    """docs/install.md's form, `flagbot @ git+URL@COMMIT`, with this repository as the URL."""
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout.strip()
    target = tmp_path / "site"
    # --no-deps and --no-build-isolation: the dependencies are this environment's already, and
    # the test must not need the network; the git URL and commit are the page's
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                           "--no-build-isolation", "--target", str(target),
                           f"flagbot[bot] @ git+file://localhost{ROOT}@{commit}"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    for rel in ("flagbot/hooks/cli.py", "flagbot/bot/admin/app.yml", "flagbot/kernels/check.py"):
        assert (target / rel).is_file(), rel
    assert not (target / "flagbot" / "hooks").is_symlink()
