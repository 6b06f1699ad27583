"""CPU random kernels on numpy."""

KERNELS = {}
