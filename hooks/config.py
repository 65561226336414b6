"""`.github/flagbot.yml`: defaults, merge, validation (keys: docs/bot-handlers.md, docs/hooks.md).

Lives in hooks/ because both sides read it: the checkers for their roots, the bot for labels,
devices, permissions and gates. Validation collects every problem so one failed check run can
name them all.
"""

from __future__ import annotations

import copy
import re
import reprlib
from dataclasses import dataclass, field
from typing import Any

import yaml

from flagbot.kernels.yamlload import safe_load_bounded

CONFIG_PATH = ".github/flagbot.yml"
MAX_CONFIG_BYTES = 256 * 1024

# Where PyTorch keeps its third-party device integration code, and where FlagOS plugins keep
# their registration glue: a PR touching these changes what PrivateUse1 vendors build on.
DEFAULT_PRIVATEUSE1_PATHS = [
    # the hooks interface a PrivateUse1 backend implements, and the accelerator base it extends
    "aten/src/ATen/detail/PrivateUse1HooksInterface.*",
    "aten/src/ATen/detail/AcceleratorHooksInterface.*",
    "aten/src/ATen/DeviceAccelerator.*",
    "aten/src/ATen/core/GeneratorForPrivateuseone.*",
    "aten/src/ATen/native/DispatchStub.*",
    # c10 base classes vendors subclass or register with
    "c10/core/DeviceType.*",
    "c10/core/DispatchKey.*",
    "c10/core/Backend.h",
    "c10/core/impl/DeviceGuardImplInterface.*",
    "c10/core/Allocator.*",
    "c10/core/Stream.*",
    # Python side: renaming/registration of the backend, lazy init, torch.accelerator
    "torch/csrc/acc/**",
    "torch/csrc/PrivateUse1*",
    "torch/csrc/DeviceAccelerator.*",
    "torch/csrc/utils/device_lazy_init.*",
    "torch/accelerator/**",
    "torch/utils/backend_registration.py",
    "torch/_utils.py",
    # PyTorch's own tests of the out-of-tree device path
    "test/cpp_extensions/open_registration_extension/**",
    "test/test_privateuseone_python_backend.py",
    "test/test_cpp_extensions_open_device_registration.py",
    # FlagOS plugins: the torch_fl package, ATen registration glue, backend routing configs
    "torch_fl/**",
    "csrc/aten/register.cc",
    "**/backends*.conf",
]

DEFAULTS: dict[str, Any] = {
    "hardwares": "hardwares",
    "backends": "backends",
    "labels": {
        "privateuse1": {
            "name": "module: PrivateUse1",
            "color": "5319e7",
            "description": "Touches PrivateUse1 / third-party device integration code",
            "paths": DEFAULT_PRIVATEUSE1_PATHS,
        },
        "vendor": {
            "pattern": "vendor: {device}",
            "color": "0e8a16",
            "description": "Touches the vendor adaptation of {device}",
        },
        # set by people: this PR adapts {device}, so the bot regenerates its stored patch
        "device": {
            "pattern": "device: {device}",
        },
        # set by people: run the kernel checks of {device} (a name under `devices:`)
        "ci": {
            "pattern": "ci: {device}",
        },
        # set by the bot while an untrusted author's kernel checks wait for `/ok-to-test`
        "needs_ok_to_test": {
            "name": "needs-ok-to-test",
            "color": "fbca04",
            "description": "Kernel checks wait for a maintainer's /ok-to-test of this head",
        },
    },
    # device name -> where its kernel checks run: `runner` (the runs-on labels of a self-hosted
    # runner, or `local` for the bot's own worker), `backend` (default <backends>/_<device>),
    # optional `ops` (default all the backend provides) and `timeout_minutes`
    "devices": {},
    # slash command -> minimum permission on the repository (read, triage, write, maintain, admin)
    "commands": {},
    "kernels": {
        "override_min_speedup": 1.30,
        "new_op_min_fraction_of_native": 0.80,
        # authors with at least this role get kernel checks without `/ok-to-test`
        "trusted_permission": "write",
        # a PR touching these (or a device's backend folder) is checked on that device
        "paths": ["kernels/**"],
        # the workflow of runner devices, in .github/workflows/: dispatched on the default branch,
        # or (dispatch: tag) the one in the tagged tree that the tag push starts
        "workflow": "device-check.yml",
        # a run with no report after this long ends `timed_out`
        "timeout_minutes": 120,
        # how runs start: `workflow_dispatch` (the workflow above, from the default branch; the
        # App needs Actions: write) or `tag` (a tag ciflow/<device>/<PR number> at the head; the
        # workflow subscribes to `push: tags`; the App needs Contents: write)
        "dispatch": "workflow_dispatch",
        # device -> ops whose failures are reported but do not fail the check run
        "quarantine": {},
    },
    "flaggems": {
        "package_root": None,
    },
    # FlagScale's hardware/patch_history.yaml after a merged vendor PR changed a per-file
    # folder: `pull_request` (a branch and a PR), `push` (straight onto the default branch) or `off`
    "patch_history": {
        "update": "pull_request",
    },
    # backend names routing files may use beyond those the FlagOS plugin's parser accepts, and
    # the routing files a PR may change (the bot's `flagbot / routing` check run)
    "routing": {
        "backends": [],
        "files": ["**/backends*.conf"],
    },
    # the worker re-applies every stored patch onto the default branch this often (0: never)
    "drift": {
        "every_hours": 24,
    },
    # a PR touching these gets the `flagbot / plugins` check run (plugin registries and the
    # files they are checked against; see docs/hooks.md, check-plugins)
    "plugins": {
        "paths": ["**/dispatch/config/*.yaml", "**/dispatch/config/*.yml",
                  "**/dispatch/config/utils.py", "**/dispatch/backends/**/register_ops.py",
                  "*_fl/utils.py", "*_fl/__init__.py", "*_fl/ops/custom_ops.py",
                  "megatron/**/*.py"],
    },
}

DEVICE_FIELD = "{device}"  # where a label pattern (`labels.*.pattern`) puts the device's name


def label_name(pattern: str, device: str) -> str:
    """The label (or text) `pattern` gives `device`: `vendor: {device}` -> `vendor: A_X100`."""
    return pattern.replace(DEVICE_FIELD, device)


def label_device(pattern: str, name: str) -> str | None:
    """The device the label `name` names under `pattern`, or None when it is no such label."""
    prefix, _, suffix = pattern.partition(DEVICE_FIELD)
    if name.startswith(prefix) and name.endswith(suffix) and len(name) > len(prefix + suffix):
        return name[len(prefix): len(name) - len(suffix)]
    return None


# repository roles a configuration may require, weakest first (the bot's ROLES adds "none")
PERMISSIONS = ("read", "triage", "write", "maintain", "admin")
HISTORY_UPDATES = ("pull_request", "push", "off")
LABEL_WHEN = ("open", "merged")
DEVICE_RE = re.compile(r"^[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+$")
# a kernel-check device: a runner label style name (`a_x100`, `cpu`, `nvidia-h100`)
CHECK_DEVICE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,49}$")
RUNNER_LABEL_RE = re.compile(r"^[A-Za-z0-9_.:-]{1,100}$")
WORKFLOW_RE = re.compile(r"^[A-Za-z0-9_.-]{1,100}\.ya?ml$")
DISPATCH_MODES = ("workflow_dispatch", "tag")
MAX_TIMEOUT_MINUTES = 24 * 60
COLOR_RE = re.compile(r"^[0-9a-fA-F]{6}$")
BACKEND_RE = re.compile(r"^[a-z][a-z0-9_]*$")


_SHORT = reprlib.Repr()
_SHORT.maxstring = _SHORT.maxother = 60
_SHORT.maxlevel, _SHORT.maxdict, _SHORT.maxlist = 2, 4, 4


def shown(value: Any, limit: int = 60) -> str:
    """`value` for an error message, cut short (a rejected value can be huge)."""
    if isinstance(value, str):
        return value if len(value) <= limit else value[: limit - 3] + "..."
    return _SHORT.repr(value)


class ConfigError(Exception):
    """`.github/flagbot.yml` is unusable; `problems` lists every reason with its key."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass
class RepoConfig:
    """The merged configuration; `raw` keeps the whole mapping for handlers that need more.

    `given` holds the top-level keys the file itself sets: a folder the file names is used as
    is, one it leaves out may be detected from the checkout (hooks/folders.py).
    """

    raw: dict[str, Any] = field(default_factory=lambda: copy.deepcopy(DEFAULTS))
    given: frozenset[str] = frozenset()

    @property
    def hardwares(self) -> str:
        return str(self.raw["hardwares"])

    @property
    def backends(self) -> str:
        return str(self.raw["backends"])

    def __getitem__(self, key: str) -> Any:
        return self.raw[key]


def merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge mappings; lists and scalars in `override` replace those in `base`."""
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def validate_labels(labels: dict[str, Any]) -> list[str]:
    """Problems in `labels`: names, globs, the vendor pattern, colours GitHub accepts."""
    known = ("ci", "device", "needs_ok_to_test", "privateuse1", "vendor")
    problems = [f"labels.{shown(key)}: unknown key (known: {', '.join(known)})"
                for key in labels if key not in known]
    pu1 = labels.get("privateuse1", {})
    if not isinstance(pu1, dict) or not isinstance(pu1.get("name"), str) or not pu1["name"].strip():
        problems.append("labels.privateuse1.name: must be a non-empty string")
    elif not isinstance(pu1.get("paths"), list) or not all(isinstance(p, str) and p for p in pu1["paths"]):
        problems.append("labels.privateuse1.paths: must be a list of glob strings")
    vendor = labels.get("vendor", {})
    if not isinstance(vendor, dict) or DEVICE_FIELD not in str(vendor.get("pattern", "")):
        problems.append("labels.vendor.pattern: must be a string containing {device}")
    for kind in ("device", "ci"):
        spec = labels.get(kind, {})
        if not isinstance(spec, dict) or DEVICE_FIELD not in str(spec.get("pattern", "")):
            problems.append(f"labels.{kind}.pattern: must be a string containing {{device}}")
    needs = labels.get("needs_ok_to_test", {})
    if not isinstance(needs, dict) or not isinstance(needs.get("name"), str) \
            or not needs["name"].strip():
        problems.append("labels.needs_ok_to_test.name: must be a non-empty string")
    for kind in ("privateuse1", "vendor", "needs_ok_to_test"):
        spec = labels.get(kind)
        if not isinstance(spec, dict):
            continue
        # GitHub takes a 6-digit hex colour without '#' and rejects anything else with a 422.
        if not isinstance(spec.get("color"), str) or not COLOR_RE.match(spec["color"]):
            problems.append(f"labels.{kind}.color: must be 6 hex digits like 0e8a16, got "
                            f"{shown(spec.get('color'))}")
        if not isinstance(spec.get("description", ""), str) or len(spec.get("description", "")) > 100:
            problems.append(f"labels.{kind}.description: must be a string of at most 100 characters")
    for kind in ("privateuse1", "vendor"):
        spec = labels.get(kind)
        if isinstance(spec, dict) and spec.get("when", "open") not in LABEL_WHEN:
            problems.append(f"labels.{kind}.when: must be one of {', '.join(LABEL_WHEN)} (open: "
                            f"while the PR is open; merged: at merge, when flagbot's checks "
                            f"passed), got {shown(spec.get('when'))}")
    return problems


def is_relative_folder(value: Any) -> bool:
    """A non-empty path inside the repository: relative, no `..` part."""
    return (isinstance(value, str) and bool(value) and not value.startswith(("/", "\\"))
            and ".." not in re.split(r"[/\\]", value) and ":" not in value)


def validate(raw: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    for key in raw:
        if key not in DEFAULTS:
            problems.append(f"{shown(key)}: unknown key (known: {', '.join(sorted(DEFAULTS))})")
    for key in ("hardwares", "backends"):
        value = raw.get(key)
        if not is_relative_folder(value):
            problems.append(f"{key}: must be a relative folder path, got {shown(value)}")
    flaggems = raw.get("flaggems")
    package_root = flaggems.get("package_root") if isinstance(flaggems, dict) else None
    if not isinstance(flaggems, dict):
        problems.append("flaggems: must be a mapping (package_root)")
    elif package_root is not None and not is_relative_folder(package_root):
        problems.append("flaggems.package_root: must be a folder path inside the repository "
                        f"(relative, no '..'), got {shown(package_root)}")
    labels = raw.get("labels")
    if not isinstance(labels, dict):
        problems.append("labels: must be a mapping")
    else:
        problems += validate_labels(labels)
    devices = raw.get("devices")
    if not isinstance(devices, dict):
        problems.append("devices: must be a mapping of device name to settings")
    else:
        for name, dev in devices.items():
            problems += validate_device(name, dev)
    commands = raw.get("commands")
    if not isinstance(commands, dict):
        problems.append("commands: must be a mapping of command name to settings")
    else:
        for name, spec in commands.items():
            perm = spec.get("permission") if isinstance(spec, dict) else spec
            if perm not in PERMISSIONS:
                problems.append(f"commands.{shown(name)}.permission: must be one of "
                                f"{', '.join(PERMISSIONS)}")
    routing = raw.get("routing")
    names = routing.get("backends") if isinstance(routing, dict) else None
    if not isinstance(names, list) or not all(isinstance(n, str) and BACKEND_RE.match(n) for n in names):
        problems.append("routing.backends: must be a list of backend names like my_npu, got "
                        f"{shown(names)}")
    history = raw.get("patch_history")
    update = history.get("update") if isinstance(history, dict) else None
    if update not in HISTORY_UPDATES:
        problems.append(f"patch_history.update: must be one of {', '.join(HISTORY_UPDATES)}, "
                        f"got {shown(update)}")
    routing_files = routing.get("files") if isinstance(routing, dict) else None
    if not isinstance(routing_files, list) or not all(isinstance(g, str) and g for g in routing_files):
        problems.append("routing.files: must be a list of path globs like **/backends*.conf, got "
                        f"{shown(routing_files)}")
    plugins = raw.get("plugins")
    paths = plugins.get("paths") if isinstance(plugins, dict) else None
    if not isinstance(paths, list) or not all(isinstance(p, str) and p for p in paths):
        problems.append(f"plugins.paths: must be a list of glob strings, got {shown(paths)}")
    kernels = raw.get("kernels")
    if not isinstance(kernels, dict):
        problems.append("kernels: must be a mapping")
    else:
        problems += validate_kernels(kernels)
    drift = raw.get("drift")
    hours = drift.get("every_hours") if isinstance(drift, dict) else None
    if not isinstance(drift, dict) or set(drift) - {"every_hours"}:
        problems.append("drift: must be a mapping with one key, every_hours")
    elif not isinstance(hours, (int, float)) or isinstance(hours, bool) or not 0 <= hours <= 24 * 365:
        problems.append(f"drift.every_hours: must be a number of hours from 0 (never) to 8760, "
                        f"got {shown(hours)}")
    return problems


def validate_device(name: Any, dev: Any) -> list[str]:
    """Problems of one `devices:` entry."""
    if not isinstance(name, str) or not CHECK_DEVICE_RE.match(name):
        return [f"devices.{shown(name)}: not a device name (letters, digits, `_.-`, at most 50)"]
    if not isinstance(dev, dict):
        return [f"devices.{name}: must be a mapping (runner, backend)"]
    problems = [f"devices.{name}.{key}: unknown key (known: backend, ops, runner, timeout_minutes)"
                for key in dev if key not in ("backend", "ops", "runner", "timeout_minutes")]
    runner = dev.get("runner", ["self-hosted", name])
    if runner != "local" and (not isinstance(runner, list) or not runner or not all(
            isinstance(r, str) and RUNNER_LABEL_RE.match(r) for r in runner)):
        problems.append(f"devices.{name}.runner: must be `local` or a non-empty list of runner "
                        "labels like [self-hosted, a_x100]")
    if "backend" in dev and not is_relative_folder(dev["backend"]):
        problems.append(f"devices.{name}.backend: must be a relative folder path")
    ops = dev.get("ops", [])
    if not isinstance(ops, list) or not all(isinstance(o, str) and BACKEND_RE.match(o) for o in ops):
        problems.append(f"devices.{name}.ops: must be a list of op names like softmax")
    problems += _timeout_problems(f"devices.{name}.timeout_minutes", dev.get("timeout_minutes", 1))
    return problems


def _timeout_problems(key: str, value: Any) -> list[str]:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_TIMEOUT_MINUTES:
        return [f"{key}: must be whole minutes from 1 to {MAX_TIMEOUT_MINUTES}, got {shown(value)}"]
    return []


def validate_kernels(kernels: dict[str, Any]) -> list[str]:
    """Problems of the `kernels:` mapping."""
    known = sorted(DEFAULTS["kernels"])
    problems = [f"kernels.{shown(key)}: unknown key (known: {', '.join(known)})"
                for key in kernels if key not in known]
    for key in ("override_min_speedup", "new_op_min_fraction_of_native"):
        value = kernels.get(key)
        if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
            problems.append(f"kernels.{key}: must be a positive number, got {shown(value)}")
    if kernels.get("trusted_permission") not in PERMISSIONS:
        problems.append(f"kernels.trusted_permission: must be one of {', '.join(PERMISSIONS)}")
    paths = kernels.get("paths")
    if not isinstance(paths, list) or not all(isinstance(p, str) and p for p in paths):
        problems.append("kernels.paths: must be a list of glob strings")
    if not isinstance(kernels.get("workflow"), str) or not WORKFLOW_RE.match(kernels["workflow"]):
        problems.append("kernels.workflow: must be a workflow file name like device-check.yml")
    problems += _timeout_problems("kernels.timeout_minutes", kernels.get("timeout_minutes"))
    if kernels.get("dispatch") not in DISPATCH_MODES:
        problems.append(f"kernels.dispatch: must be one of {', '.join(DISPATCH_MODES)}, got "
                        f"{shown(kernels.get('dispatch'))}")
    quarantine = kernels.get("quarantine")
    if not isinstance(quarantine, dict):
        problems.append("kernels.quarantine: must be a mapping of device name to a list of ops")
    else:
        for device, ops in quarantine.items():
            if not isinstance(device, str) or not CHECK_DEVICE_RE.match(device):
                problems.append(f"kernels.quarantine.{shown(device)}: not a device name")
            elif not isinstance(ops, list) or not all(isinstance(o, str) and BACKEND_RE.match(o)
                                                      for o in ops):
                problems.append(f"kernels.quarantine.{device}: must be a list of op names like "
                                f"softmax, got {shown(ops)}")
    return problems


def parse_config(text: str | None) -> RepoConfig:
    """Merge YAML `text` (None or empty = no file) over the defaults; raise ConfigError."""
    if not text or not text.strip():
        return RepoConfig()
    if len(text) > MAX_CONFIG_BYTES:
        raise ConfigError([f"{CONFIG_PATH}: {len(text)} characters, over the "
                           f"{MAX_CONFIG_BYTES}-character limit"])
    try:
        loaded = safe_load_bounded(text)
    except yaml.YAMLError as exc:
        raise ConfigError([f"{CONFIG_PATH}: not valid YAML: {shown(str(exc), 400)}"]) from exc
    if loaded is None:
        return RepoConfig()
    if not isinstance(loaded, dict):
        raise ConfigError([f"{CONFIG_PATH}: top level must be a mapping"])
    merged = merge(DEFAULTS, loaded)
    problems = validate(merged)
    if problems:
        raise ConfigError(problems)
    return RepoConfig(merged, frozenset(loaded))
