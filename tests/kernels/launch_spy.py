"""A stand-in for a Triton kernel object that records each launch (grid, arguments) and then
launches the real kernel with them: tests see which tile a dispatch rule picked while the
result is still computed, and checked, by the kernel itself."""

from __future__ import annotations

from typing import Any


class LaunchSpy:
    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel
        self.launches: list[tuple[Any, tuple[Any, ...], dict[str, Any]]] = []

    def __getitem__(self, grid: Any) -> Any:
        def launch(*args: Any, **kwargs: Any) -> Any:
            self.launches.append((grid, args, kwargs))
            return self.kernel[grid](*args, **kwargs)
        return launch


def spy_on(monkeypatch: Any, module: Any, name: str) -> LaunchSpy:
    """Put a LaunchSpy in place of `module.name` for one test (`monkeypatch` undoes it)."""
    spy = LaunchSpy(getattr(module, name))
    monkeypatch.setattr(module, name, spy)
    return spy
