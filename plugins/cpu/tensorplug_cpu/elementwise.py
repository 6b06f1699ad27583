"""CPU elementwise kernels on numpy."""

KERNELS = {}
