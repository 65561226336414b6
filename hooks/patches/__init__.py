"""The patch engine: patch bytes, generation, the round trip, hetero.txt, stored-patch checks.

Commands and hooks (hooks/patch_cmd.py, hooks/check_patches.py, ...) parse arguments and print;
everything here takes values and a repository path and returns values or raises.
"""
