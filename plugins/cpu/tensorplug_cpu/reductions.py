"""CPU reductions kernels on numpy."""

KERNELS = {}
