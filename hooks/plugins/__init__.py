"""Static checks of FlagOS plugin registries (dispatch configs, Megatron override registry).

`check.check_plugins(paths)` is the one entry point; the CLI (hooks/check_plugins.py), the
pre-commit hook and the bot's `flagbot / plugins` check run all call it.
"""
