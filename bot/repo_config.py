"""The repository's `.github/flagbot.yml`, read from its default branch through the contents API.

Read from the default branch, never the PR head: a pull request must not be able to change the
rules it is checked by. Parsing and validation live in hooks/config.py (shared with the hooks).
"""

from __future__ import annotations

from flagbot.bot.github import GitHubClient
from flagbot.hooks.config import CONFIG_PATH, ConfigError, RepoConfig, parse_config


def load(client: GitHubClient, default_branch: str) -> tuple[RepoConfig | None, ConfigError | None]:
    """(config, None) or (None, the error naming each bad key); never raises ConfigError."""
    text = client.read_file(CONFIG_PATH, default_branch)
    try:
        return parse_config(text), None
    except ConfigError as exc:
        return None, exc
