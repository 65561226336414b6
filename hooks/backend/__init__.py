"""Static checks of vendor backend folders in the FlagGems layout (issue 4); never imports them."""
