"""Static checks of vendor backend folders in the FlagGems layout (docs/hooks.md); never imports them."""
