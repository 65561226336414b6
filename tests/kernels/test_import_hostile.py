"""`kernels import` against payloads that attack their own check: each reproduces a way a
payload once got a wrong operator in, changed the destination or outlived its time limit."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from flagbot.kernels import bubblewrap
from flagbot.kernels.cli import main
from tests.kernels.generated_ops import LAX_TEST, code, payload, selection, write_json

REQUIRED = os.environ.get("FLAGBOT_REQUIRE_BWRAP") == "1"
usable = shutil.which("bwrap") is not None and not bubblewrap.probe(shutil.which("bwrap") or "")
needs_bwrap = pytest.mark.skipif(not REQUIRED and not usable,
                                 reason="bubblewrap is not usable here (.ci/run installs it)")

# A wrong abs (it negates) whose exit handler forges a passing result every way it can: any
# results file it can reach, and every descriptor it holds, with correct outputs from torch.
FORGER = code("abs", "-x") + '''
import atexit, io, json, os, sys

def _forge():
    import torch
    from flagbot.kernels.intake.probe import call_cases
    request = json.loads(open(sys.argv[1]).read())
    buf = io.BytesIO()
    torch.save(call_cases(request, torch.abs), buf)
    frames = b""
    for kind, data in (("status", json.dumps({"import": "ok", "called": True}).encode()),
                       ("outputs", buf.getvalue()), ("end", b"")):
        frames += f"{kind} {len(data)}\\n".encode() + data
    for fd in range(3, 64):
        try:
            os.write(fd, frames)
        except OSError:
            pass
    for name in ("status.json", "outputs.pt", "result.json"):
        try:
            open(os.path.join(sys.argv[2], name), "wb").write(frames)
        except OSError:
            pass

atexit.register(_forge)
'''


def attack(body: str) -> str:
    """A correct abs whose import runs `body` first."""
    return body + "\n" + code("abs", "tl.abs(x)")


def run_import(work: Path, *extra: str, timeout: str = "120") -> int:
    write_json(work / "selected.json", selection(2, "abs"))
    return main(["import", "--input", "selected.json", "--batch", "2", "--payloads", "payloads",
                 "--dest", "tree/experimental", "--timeout", timeout, *extra], cwd=str(work))


def files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A work folder whose destination already holds an imported neg."""
    write_json(tmp_path / "payloads/neg.json",
               payload("neg", test=LAX_TEST.format(name="neg")))
    write_json(tmp_path / "selected.json", selection(2, "neg"))
    assert main(["import", "--input", "selected.json", "--batch", "2", "--payloads", "payloads",
                 "--dest", "tree/experimental", *([] if usable else ["--no-sandbox"])],
                cwd=str(tmp_path)) == 0
    return tmp_path


@needs_bwrap
@pytest.mark.slow
def test_a_wrong_kernel_cannot_forge_a_pass_at_exit(work: Path, capsys) -> None:
    write_json(work / "payloads/abs.json", payload("abs", source=FORGER))
    before = files(work / "tree/experimental")
    assert run_import(work) == 1
    out = capsys.readouterr().out
    assert "rejected abs: fails the accuracy check against torch" in out
    assert files(work / "tree/experimental") == before


@needs_bwrap
@pytest.mark.slow
def test_a_module_cannot_change_what_was_checked(work: Path, capsys) -> None:
    rewrite = attack("open(__file__, 'a').write('\\nEVIL = 1\\n')")
    write_json(work / "payloads/abs.json", payload("abs", source=rewrite))
    assert run_import(work) == 1  # in the sandbox its file is read-only: it does not import
    assert "rejected abs: does not import: OSError" in capsys.readouterr().out
    assert not (work / "tree/experimental/elementwise/abs.py").exists()


@pytest.mark.slow
def test_without_the_sandbox_a_changed_file_is_still_caught(work: Path, capsys) -> None:
    rewrite = attack("open(__file__, 'a').write('\\nEVIL = 1\\n')")
    write_json(work / "payloads/abs.json", payload("abs", source=rewrite))
    assert run_import(work, "--no-sandbox") == 1
    assert "rejected abs: changed its own files while being checked (elementwise/abs.py)" in \
        capsys.readouterr().out
    assert "EVIL" not in "".join(p.read_text() for p in (work / "tree").rglob("*.py"))


@needs_bwrap
@pytest.mark.slow
def test_a_rejected_payload_cannot_touch_the_destination(work: Path, capsys) -> None:
    dest = work / "tree/experimental"
    vandal = (f"import os, pathlib\n"
              f"for p in pathlib.Path({str(dest)!r}).rglob('*neg*'):\n"
              f"    os.unlink(p)\n"
              f"pathlib.Path({str(dest)!r}, 'planted.py').write_text('x = 1')\n"
              "raise SystemExit('rejected on purpose')\n")
    write_json(work / "payloads/abs.json", payload("abs", source=attack(vandal)))
    before = files(dest)
    assert run_import(work) == 1
    assert "rejected abs" in capsys.readouterr().out
    assert files(dest) == before


@needs_bwrap
@pytest.mark.slow
def test_detached_grandchildren_die_with_the_time_limit(work: Path, tmp_path: Path) -> None:
    dest = work / "tree/experimental"
    marker = tmp_path / "outlived"
    spawn = (f"import subprocess, time\n"
             f"subprocess.Popen(['setsid', 'sh', '-c', 'sleep 3; echo x > {marker}; "
             f"echo x > {dest}/late.py; echo x > /work/scratch/late'], start_new_session=True)\n"
             "time.sleep(60)\n")
    write_json(work / "payloads/abs.json", payload("abs", source=attack(spawn)))
    before = files(dest)
    started = time.monotonic()
    assert run_import(work, timeout="2") == 1
    assert time.monotonic() - started < 30
    time.sleep(4)  # longer than the grandchild waits before writing
    assert not marker.exists() and files(dest) == before
    assert json.loads((dest / "_metadata.json").read_text())["ops"].keys() == {"neg"}
