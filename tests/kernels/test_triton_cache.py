"""benchmarks/triton_cache.py: Triton's compile cache packed on one machine and unpacked on
the next keeps what loading a kernel needs (binary, metadata, a group file naming them where
they land), drops the text IR, stays within its size budget, refuses archives that would write
outside the cache, and a real Triton compiling the same kernel again finds it there."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

from .benchmarks_support import load_benchmark

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def tc() -> Any:
    return load_benchmark("triton_cache")


def _kernel(cache: Path, key: str, name: str, binary: bytes = b"\x7fELF" * 64,
            mtime: float | None = None) -> None:
    folder = cache / key
    folder.mkdir(parents=True)
    files = {f"{name}.cubin": binary, f"{name}.json": b'{"name": "%s"}' % name.encode(),
             f"{name}.ptx": b"// ptx" * 100, f"{name}.ttgir": b"// ttgir" * 100}
    for file, data in files.items():
        (folder / file).write_bytes(data)
    group = folder / f"__grp__{name}.json"
    group.write_text(json.dumps({"child_paths": {f: str(folder / f) for f in files}}))
    if mtime is not None:
        os.utime(group, (mtime, mtime))


def test_a_packed_kernel_unpacks_with_its_binary_metadata_and_a_group_naming_them(
        tc: Any, tmp_path: Path) -> None:
    src, dst = tmp_path / "a", tmp_path / "b"
    _kernel(src, "KEY1", "_mm_kernel")
    assert tc.pack(src, tmp_path / "c.tgz", 1 << 20) == (1, 0)
    assert tc.unpack(tmp_path / "c.tgz", dst) == 1
    assert sorted(p.name for p in (dst / "KEY1").iterdir()) == [
        "__grp___mm_kernel.json", "_mm_kernel.cubin", "_mm_kernel.json"]
    group = json.loads((dst / "KEY1" / "__grp___mm_kernel.json").read_text())
    assert group == {"child_paths": {
        "_mm_kernel.cubin": str((dst / "KEY1" / "_mm_kernel.cubin").resolve()),
        "_mm_kernel.json": str((dst / "KEY1" / "_mm_kernel.json").resolve())}}
    assert (dst / "KEY1" / "_mm_kernel.cubin").read_bytes() == b"\x7fELF" * 64


def test_pack_takes_the_newest_kernels_within_its_budget_and_skips_incomplete_ones(
        tc: Any, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _kernel(cache, "OLD", "k_old", b"o" * 3000, mtime=1000)
    _kernel(cache, "NEW", "k_new", b"n" * 3000, mtime=2000)
    _kernel(cache, "GONE", "k_gone", mtime=3000)
    (cache / "GONE" / "k_gone.cubin").unlink()  # a group whose binary is missing
    (cache / "JUNK").mkdir()
    (cache / "JUNK" / "__grp__x.json").write_text("{not json")
    assert tc.pack(cache, tmp_path / "c.tgz", 4000) == (1, 1)
    with tarfile.open(tmp_path / "c.tgz") as tar:
        assert {Path(n).parts[0] for n in tar.getnames()} == {"NEW"}


def test_unpack_refuses_an_archive_that_writes_outside_the_cache(
        tc: Any, tmp_path: Path) -> None:
    evil = tmp_path / "evil.tgz"
    payload = tmp_path / "payload"
    payload.write_text("x")
    with tarfile.open(evil, "w:gz") as tar:
        tar.add(payload, arcname="../outside.txt")
    with pytest.raises(ValueError):
        tc.unpack(evil, tmp_path / "cache")
    assert not (tmp_path / "outside.txt").exists()
    assert tc.main(["unpack", str(evil), "--cache", str(tmp_path / "cache2")]) == 1


def test_unpack_drops_a_group_that_names_files_in_another_folder(
        tc: Any, tmp_path: Path) -> None:
    archive = tmp_path / "c.tgz"
    text = json.dumps({"child_paths": {"k.cubin": "OTHER/k.cubin"}}).encode()
    (tmp_path / "k.cubin").write_bytes(b"x")
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(tmp_path / "k.cubin", arcname="OTHER/k.cubin")
        info = tarfile.TarInfo("KEY/__grp__k.json")
        info.size = len(text)
        tar.addfile(info, io.BytesIO(text))
    assert tc.unpack(archive, tmp_path / "cache") == 0
    assert not (tmp_path / "cache" / "KEY" / "__grp__k.json").exists()


def test_unpack_of_a_group_file_without_its_children_exits_1_with_a_message(
        tc: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    archive = tmp_path / "c.tgz"
    text = json.dumps({"paths": {}}).encode()
    with tarfile.open(archive, "w:gz") as tar:
        info = tarfile.TarInfo("KEY/__grp__k.json")
        info.size = len(text)
        tar.addfile(info, io.BytesIO(text))
    assert tc.main(["unpack", str(archive), "--cache", str(tmp_path / "cache")]) == 1
    assert "could not be unpacked" in capsys.readouterr().err


def test_pack_and_unpack_from_the_command_line_say_what_they_did(
        tc: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _kernel(tmp_path / "a", "K", "k")
    assert tc.main(["pack", str(tmp_path / "c.tgz"), "--cache", str(tmp_path / "a")]) == 0
    assert tc.main(["unpack", str(tmp_path / "c.tgz"), "--cache", str(tmp_path / "b")]) == 0
    err = capsys.readouterr().err
    assert "1 kernels packed" in err and "1 kernels unpacked" in err
    assert tc.main(["pack", str(tmp_path / "d.tgz"), "--cache", str(tmp_path / "none")]) == 1
    assert tc.main(["unpack", str(tmp_path / "none.tgz")]) == 1


_COMPILE = """
import json, sys
sys.path.insert(0, sys.argv[1])
import aot_ptx
kernel = aot_ptx.compiled(json.loads(sys.argv[2]))
print(json.dumps(sorted(kernel.asm)))
"""

# the split norms' statistics pass over fp32 rows, 1024-element tiles
_SPEC = {"kernel": "flagbot.kernels.ops._norm_split:_norm_chunk_stats_kernel",
         "pointer": "*fp32", "warps": 4, "stages": 3,
         "constexprs": {"RMS": False, "BLOCK_N": 1024, "ALIGN": 1}}


def _compile(cache: Path, spec: dict[str, Any]) -> list[str] | None:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["TRITON_CACHE_DIR"] = str(cache)
    done = subprocess.run([sys.executable, "-c", _COMPILE, str(BENCHMARKS), json.dumps(spec)],
                          capture_output=True, text=True, env=env, timeout=600)
    if done.returncode != 0:
        if "ptxas" in done.stderr.lower() or "GPUTarget" in done.stderr:
            return None
        raise AssertionError(done.stderr[-3000:])
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


def test_a_real_triton_loads_a_kernel_from_an_unpacked_cache_without_compiling_it(
        tc: Any, tmp_path: Path) -> None:
    spec = _SPEC
    first = _compile(tmp_path / "a", spec)
    if first is None:
        pytest.skip("this Triton cannot compile for sm_90 here")
    assert "cubin" in first and "ptx" in first
    assert tc.pack(tmp_path / "a", tmp_path / "c.tgz", 64 << 20)[0] >= 1
    assert tc.unpack(tmp_path / "c.tgz", tmp_path / "b") >= 1
    before = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*"))
    # loaded from the cache: the binary alone, no IR made again, no file written
    assert _compile(tmp_path / "b", spec) == ["cubin"]
    assert sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*")) == before
