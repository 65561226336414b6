"""What the handlers do outside GitHub: the git workspace (clones, worktrees, pushes), the
checker sandbox, and patch regeneration."""
