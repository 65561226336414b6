"""What `kernels check` reads and writes beside the report: the base revision's folder
(`--compare-to`), the expectations file (`--expected`, `--write-expected`) and plots (`--plot`).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flagbot.kernels import expected
from flagbot.kernels.loader import Backend, BackendLoadError


@dataclass
class Outputs:
    """The check's extra inputs and outputs, resolved against the caller's folder."""

    expected: dict[expected.Key, tuple[float, float]] | None = None
    expected_path: Path | None = None
    write_expected: Path | None = None
    plot_dir: Path | None = None
    base_note: dict[str, Any] | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace, cwd: str | None) -> Outputs:
        """Read `--expected` now, so a bad file is a usage error before any kernel runs."""
        root = Path(cwd or os.getcwd())
        out = cls()
        if getattr(args, "expected", None):
            out.expected_path = root / args.expected
            out.expected = expected.read(out.expected_path)
        if getattr(args, "write_expected", None):
            out.write_expected = root / args.write_expected
        if getattr(args, "plot", None):
            out.plot_dir = root / args.plot
        return out

    @contextmanager
    def base(self, head: Backend, ref: str | None, arch: str | None
             ) -> Iterator[tuple[Backend | None, str | None]]:
        """The backend at `ref` while the check runs (None without --compare-to). A base that
        does not load is reported, not fatal: the head may be the fix."""
        if not ref:
            yield None, None
            return
        from flagbot.kernels.compare import load_base

        with tempfile.TemporaryDirectory(prefix="flagbot-base-") as tmp:
            try:
                base, sha = load_base(head, ref, Path(tmp), arch)
            except BackendLoadError as exc:
                self.base_note = {"ref": ref, "sha": None, "error": str(exc)[:500]}
                print(f"flagbot kernels: warning: --compare-to {ref}: the backend at {ref} does "
                      f"not load ({exc}); nothing to compare with", file=sys.stderr)
                yield None, None
                return
            self.base_note = {"ref": ref, "sha": sha, "error": None}
            yield base, ref

    def judge(self, entries: list[dict[str, Any]], code: int) -> int:
        """Apply the expectations to the entries; the exit code after them."""
        if self.expected is None:
            return code
        failed = expected.apply(entries, self.expected)
        return 1 if failed and code in (0, 2) else code

    def write(self, doc: dict[str, Any]) -> None:
        """Regenerated expectations and plots; records both in the report."""
        doc["compare"] = self.base_note
        if self.expected_path is not None:
            doc["expected"] = {"path": str(self.expected_path),
                               "failed_ops": sum(any(r["status"] in (expected.REGRESSION,
                                                                     expected.UNEXPECTED_WIN)
                                                     for r in op.get("expectations", []))
                                                 for op in doc["ops"])}
        if self.write_expected is not None:
            old = expected.read(self.write_expected) if self.write_expected.is_file() else {}
            now = expected.measured(doc["ops"])
            if not now:
                raise expected.ExpectedError(
                    f"--write-expected {self.write_expected}: nothing was timed (no "
                    "accelerator, device busy, or no op accurate); no file written")
            rows = expected.regenerate(now, old)
            device = (doc["environment"].get("device") or {}).get("name")
            self.write_expected.parent.mkdir(parents=True, exist_ok=True)
            self.write_expected.write_text(expected.render(rows, device), encoding="utf-8")
            doc["expected"] = {"written": str(self.write_expected), "rows": len(rows)}
        if self.plot_dir is not None:
            from flagbot.kernels.plot import plot_report

            doc["plots"] = plot_report(doc, self.plot_dir)
