"""Which devices a pull request is checked on, with which settings (`devices:` and `kernels:`).

A PR is checked on a device when it touches the device's backend folder or the kernel paths
(`kernels.paths`), and the device is asked for: a `ci: <device>` label on the PR or `/check`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from flagbot.bot.github import Label
from flagbot.bot.handlers.globs import compile_globs, matching_glob
from flagbot.hooks.config import RepoConfig, label_device

CHECK_NAME = "flagbot / kernels ({device})"


@dataclass(frozen=True)
class Device:
    """One `devices:` entry, defaults filled in."""

    name: str
    runner: tuple[str, ...]  # runs-on labels; empty for the bot's own (`local`) runner
    backend: str
    ops: tuple[str, ...]
    timeout_minutes: int

    @property
    def local(self) -> bool:
        return not self.runner

    @property
    def check_name(self) -> str:
        return CHECK_NAME.format(device=self.name)


@dataclass(frozen=True)
class Rules:
    """The `kernels:` settings and the labels kernel checks use."""

    min_speedup: float
    min_native_fraction: float
    trusted_permission: str
    paths: tuple[str, ...]
    workflow: str
    timeout_minutes: int
    ci_pattern: str
    needs_label: Label
    dispatch: str = "workflow_dispatch"  # or `tag`: a ciflow/<device>/<PR> tag starts the run
    quarantine: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (device, ops) pairs

    @property
    def by_tag(self) -> bool:
        return self.dispatch == "tag"

    def quarantined(self, device: str) -> frozenset[str]:
        """The ops of `device` whose failures do not fail its check run."""
        return frozenset(op for name, ops in self.quarantine if name == device for op in ops)


def rules(config: RepoConfig) -> Rules:
    """The kernel settings of a validated config."""
    k = config["kernels"]
    needs = config["labels"]["needs_ok_to_test"]
    return Rules(float(k["override_min_speedup"]), float(k["new_op_min_fraction_of_native"]),
                 str(k["trusted_permission"]), tuple(k["paths"]), str(k["workflow"]),
                 int(k["timeout_minutes"]), str(config["labels"]["ci"]["pattern"]),
                 Label(str(needs["name"]), str(needs.get("color", "fbca04")),
                       str(needs.get("description", ""))),
                 str(k.get("dispatch") or "workflow_dispatch"),
                 tuple(sorted((str(d), tuple(ops)) for d, ops in (k.get("quarantine") or {}).items())))


def devices(config: RepoConfig) -> dict[str, Device]:
    """Every configured device by name."""
    out = {}
    timeout = int(config["kernels"]["timeout_minutes"])
    for name, dev in sorted(config["devices"].items()):
        runner = dev.get("runner", ["self-hosted", name])
        out[name] = Device(name, () if runner == "local" else tuple(runner),
                           str(dev.get("backend") or f"{config.backends.rstrip('/')}/_{name}").strip("/"),
                           tuple(dev.get("ops") or ()), int(dev.get("timeout_minutes", timeout)))
    return out


def labelled(config: RepoConfig, labels: Iterable[str]) -> list[str]:
    """Configured devices named by `ci: <device>` labels among `labels`."""
    pattern = str(config["labels"]["ci"]["pattern"])
    found = {device for name in labels if (device := label_device(pattern, name)) is not None}
    return sorted(found & set(config["devices"]))


def touching(device: Device, rule: Rules, paths: Sequence[str]) -> list[str]:
    """The files of `paths` that make the PR need checking on `device`."""
    folder = device.backend.rstrip("/") + "/"
    globs = compile_globs(rule.paths)
    return [p for p in paths if p.startswith(folder) or matching_glob(p, globs) is not None]
