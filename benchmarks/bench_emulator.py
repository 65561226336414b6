"""Speed of the GitHub API emulator: `.venv/bin/python benchmarks/bench_emulator.py`."""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from github import Auth, Github  # noqa: E402

from testing.github_emulator import Emulator  # noqa: E402


def timed(fn: Callable[[], object], runs: int = 5) -> float:
    """Median wall time of `fn` in milliseconds."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    """Print one line per measurement."""
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        emu = Emulator(Path(tmp)).start()
        print(f"start (RSA key + server): {(time.perf_counter() - start) * 1000:.0f} ms")
        repo = emu.create_repo("flagos/FlagGems", files={"README.md": "hi\n"})
        files: dict[str, str | bytes] = {f"hardwares/A_X100/f{i:03}.txt": f"{i}\n" for i in range(300)}
        start = time.perf_counter()
        sha = emu.push_commit(repo, branch="feature", files=files)
        emu.open_pull(repo, head="feature")
        print(f"push 300 files + open PR (diff computed): {(time.perf_counter() - start) * 1000:.0f} ms")
        auth = Auth.AppAuth(emu.app_id, emu.private_key_pem).get_installation_auth(emu.installation_id)
        g = Github(auth=auth, base_url=emu.url, per_page=100, seconds_between_requests=None,
                   seconds_between_writes=None)
        r = g.get_repo("flagos/FlagGems")
        pr = r.get_pull(1)
        print(f"PyGithub GET repo: {timed(lambda: g.get_repo('flagos/FlagGems'), 50):.1f} ms")
        print(f"PyGithub list 300 PR files (3 pages): {timed(lambda: list(pr.get_files())):.0f} ms")
        ann = [{"path": "x", "start_line": 1, "end_line": 1, "annotation_level": "warning", "message": "m"}] * 50

        def check_run() -> None:
            run = r.create_check_run("flagbot / backends", sha, status="in_progress")
            for _ in range(6):
                run.edit(output={"title": "t", "summary": "s", "annotations": ann})
            run.edit(conclusion="failure")

        print(f"check run with 300 annotations (8 calls): {timed(check_run):.0f} ms")
        print(f"requests answered: {len(emu.calls)}, emulator errors: {len(emu.server_errors)}")
        emu.stop()


if __name__ == "__main__":
    main()
