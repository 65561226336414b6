"""What a tag-started device-check run needs, read where a `workflow_dispatch` gets inputs.

A tag push carries no inputs, so the tag variant of the workflow runs this first, on the default
branch's `.github/flagbot.yml` (the maintainers' settings, not the pull request's):

    python -m flagbot.bot.devices.tag_inputs ciflow/<device>/<PR> <config> >> "$GITHUB_OUTPUT"

It prints `name=value` lines: the values `runs.dispatch_inputs` sends (not `base`: a tag does
not say which base the pull request has), plus the artifact name the bot will look for. Exit 2 with a message when the tag or the device is not valid.
Only the standard library, PyYAML and flagbot's own modules are imported (no bot extras).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from flagbot.bot.devices import plan
from flagbot.bot.devices.ids import TAG_ARTIFACT, parse_tag
from flagbot.hooks.config import ConfigError, parse_config


def outputs(tag: str, config_text: str, sha: str) -> dict[str, str]:
    """The outputs for `tag` at `sha`; ValueError says why there are none."""
    found = parse_tag(tag)
    if not re.fullmatch(r"[0-9a-f]{40}", sha):
        raise ValueError(f"{sha[:60]!r} is not a commit sha")
    if found is None:
        raise ValueError(f"{tag!r} is not a ciflow/<device>/<PR number> tag")
    name, pr = found
    try:
        config = parse_config(config_text)
    except ConfigError as exc:
        raise ValueError("the configuration is not valid: " + "; ".join(exc.problems)) from None
    device = plan.devices(config).get(name)
    if device is None or device.local:
        raise ValueError(f"device {name!r} is not a runner device under `devices:`")
    rule = plan.rules(config)
    out = {"device": name, "pr": str(pr), "sha": sha, "runner": json.dumps(list(device.runner)),
            "backend": device.backend, "ops": ",".join(device.ops),
            "min_speedup": f"{rule.min_speedup:g}",
            "min_native_fraction": f"{rule.min_native_fraction:g}",
            "artifact": TAG_ARTIFACT.format(device=name, pr=pr, sha=sha)}
    if any("\n" in v or "\r" in v for v in out.values()):  # one line per output, always
        raise ValueError("a configured value spans lines")
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 3:
        print("usage: python -m flagbot.bot.devices.tag_inputs TAG CONFIG SHA", file=sys.stderr)
        return 2
    tag, path, sha = args
    try:
        text = Path(path).read_text(encoding="utf-8") if Path(path).is_file() else ""
        found = outputs(tag, text, sha)
    except (ValueError, OSError) as exc:
        print(f"tag_inputs: {exc}; nothing to run", file=sys.stderr)
        return 2
    for key, value in found.items():
        print(f"{key}={value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
