"""CPU indexing kernels on numpy."""

KERNELS = {}
