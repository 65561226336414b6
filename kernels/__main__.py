"""`python -m flagbot.kernels ...` = `flagbot kernels ...` (from an installed flagbot)."""

from __future__ import annotations

from flagbot.kernels.cli import main

raise SystemExit(main())
