"""Slash commands in pull request comments: one module per command, each a `Command` (name,
usage, default minimum role, example, code); `registry.COMMANDS` lists them and `/help` is made
from it. `parse.py` finds the commands in a comment; `bot/github/markdown.py` quotes untrusted text safely.
"""
