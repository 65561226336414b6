"""Packaging: the three top-level folders install as `flagbot.hooks`, `flagbot.bot` and
`flagbot.kernels` by a mapping (no links), from any clone, Windows' link-less ones included; the
wheel installs only the `flagbot` namespace, beside a distribution that owns a top-level
`kernels` package (a real one exists on PyPI), and neither shadows the other."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from testing.layout import clone_without_links, module_files, package_names, setuptools_config

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow

DUMMY_PYPROJECT = """\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "not-flagbot-kernels"
version = "1.0"

[tool.setuptools]
packages = ["kernels"]
"""


def _wheel(source: Path, out: Path) -> Path:
    # Without build isolation when this interpreter can build (no download); with it otherwise.
    isolation = [] if importlib.util.find_spec("setuptools") is None else ["--no-build-isolation"]
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", *isolation,
                    "-w", str(out), str(source)], check=True, capture_output=True, text=True)
    (wheel,) = out.glob("*.whl")
    return wheel


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout's working files, cloned the way Git for Windows clones (no links)."""
    return clone_without_links(tmp_path_factory.mktemp("clone"))[0]


@pytest.fixture(scope="module")
def wheels(clone: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    work = tmp_path_factory.mktemp("wheels")
    dummy = work / "not-flagbot-kernels"
    (dummy / "kernels").mkdir(parents=True)
    (dummy / "pyproject.toml").write_text(DUMMY_PYPROJECT)
    (dummy / "kernels" / "__init__.py").write_text('OWNER = "not-flagbot-kernels"\n')
    return _wheel(clone, work / "flagbot-dist"), _wheel(dummy, work / "dummy-dist")


def test_no_tracked_file_is_a_symbolic_link() -> None:
    staged = subprocess.run(["git", "ls-files", "-s"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.splitlines()
    assert len(staged) > 100, "git listed too few files to be trusted"
    assert [line for line in staged if line.startswith("120000 ")] == []


def test_the_package_list_names_every_package_folder() -> None:
    listed = setuptools_config()["packages"]
    assert isinstance(listed, list)
    assert set(listed) == package_names()
    assert {"flagbot.hooks.patches", "flagbot.bot.handlers", "flagbot.kernels.ops"} <= set(listed)


def test_a_clone_without_links_builds_a_wheel_with_every_module_as_a_real_file(
        clone: Path, wheels: tuple[Path, Path]) -> None:
    flagbot_wheel, _ = wheels
    with zipfile.ZipFile(flagbot_wheel) as wheel:
        names = set(wheel.namelist())
        expected = {name: path for name, path in module_files().items()}
        assert len(expected) > 150
        for name, path in expected.items():
            inside = name.replace(".", "/") + ("/__init__.py" if path.name == "__init__.py"
                                               else ".py")
            assert inside in names, f"{inside} (from {path.relative_to(ROOT)}) not in the wheel"
            assert wheel.read(inside) == path.read_bytes(), inside


def test_the_wheel_holds_only_the_flagbot_namespace(wheels: tuple[Path, Path]) -> None:
    flagbot_wheel, _ = wheels
    names = zipfile.ZipFile(flagbot_wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"flagbot"}
    for side in ("hooks", "bot", "kernels"):
        assert f"flagbot/{side}/__init__.py" in names
    assert "flagbot/hooks/data/aten_ops.txt" in names
    # the page GET /dashboard renders: served from the installed package, not the checkout
    assert "flagbot/bot/dashboard/templates/dashboard.html" in names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    scripts = zipfile.ZipFile(flagbot_wheel).read(entry_points).decode()
    assert "flagbot = flagbot.hooks.cli:main" in scripts


def test_flagbot_installs_beside_a_top_level_kernels_distribution(
        wheels: tuple[Path, Path], tmp_path: Path) -> None:
    env = tmp_path / "venv"
    venv.create(env, with_pip=False)
    python = env / "bin" / "python"
    # A PYTHONPATH naming a checkout (with its flagbot.egg-info) would make pip report flagbot
    # as "already installed" in the new environment and skip it.
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    for wheel in reversed(wheels):  # the other distribution first, as an ML stack would have it
        subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                        "--no-deps", "--no-index", str(wheel)], check=True,
                       capture_output=True, text=True, env=clean)
    code = ("import kernels, flagbot.kernels, flagbot.hooks.cli, flagbot.hooks.patch_cmd;"
            "assert kernels.OWNER == 'not-flagbot-kernels', kernels.__file__;"
            "assert flagbot.kernels.__file__ != kernels.__file__;"
            "import importlib.util as u;"
            "assert u.find_spec('hooks') is None and u.find_spec('bot') is None;"
            "print('ok')")
    proc = subprocess.run([str(python), "-c", code], capture_output=True, text=True, cwd=tmp_path,
                          env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stdout + proc.stderr
