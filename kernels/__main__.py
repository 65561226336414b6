"""`python -m flagbot.kernels ...` = `flagbot kernels ...` (device runners need no install)."""

from __future__ import annotations

from flagbot.kernels.cli import main

raise SystemExit(main())
