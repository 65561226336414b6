"""The exit codes of every flagbot command, on all three sides: a contract users' scripts and
CI read. 0 ok, 1 a check failed (the patch, the checked files or the kernels are wrong), 2 a
usage or environment error. The only module here besides the package's own `__init__`: the
device side may import it (it imports nothing)."""

EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_USAGE = 2
