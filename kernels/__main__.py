"""`python -m kernels ...` = `flagbot kernels ...` (device runners need no install)."""

from __future__ import annotations

from kernels.cli import main

raise SystemExit(main())
