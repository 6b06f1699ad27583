"""tensorplug-distributed: ``tensorplug.distributed`` and ``DistributedDataParallel`` on MPI and NCCL.

Process groups are MPI communicators (mpi4py, imported on first use); the collectives are
dispatcher operators in the ``c10d`` namespace with a CPU kernel (MPI on the numpy buffers) and a
CUDA kernel (NCCL through cupy). ``tensorplug run -n N script.py`` starts a job over mpiexec.
See docs/distributed.md.
"""

from __future__ import annotations

import tensorplug
from tensorplug import plugin_api
from tensorplug.plugin_api import lazy_name

from . import api, group, kernels

__version__ = "0.1.0"
TENSORPLUG_API = (1, 3)  # the plugin API this plugin is written for (tensorplug.plugin_api)

_NAMES = {
    **{n: getattr(api, n) for n in api.__all__},
    **{n: getattr(group, n) for n in group.__all__},
    "run": lazy_name("tensorplug_distributed.run", "LAUNCHER"),
    "DistributedDataParallel": lazy_name("tensorplug_distributed.ddp", "DistributedDataParallel"),
    "GradBucket": lazy_name("tensorplug_distributed.ddp", "GradBucket"),
}


@tensorplug.hookimpl
def tensorplug_register_kernels(library):
    """Define the c10d operators, with their checks, and register the kernels of the backends present."""
    lib = library("c10d", "DEF")
    for name, schema in kernels.SCHEMAS.items():
        lib.define(schema, check=kernels.CHECKS[name])
        # collectives are not differentiable: autograd lets them through (DDP calls them under no_grad)
        lib.impl(name, plugin_api.fallthrough_kernel, "Autograd")
    if _served("cpu"):
        for name, fn in kernels.CPU_KERNELS.items():
            lib.impl(name, fn, "CPU")
    if _served("cuda"):
        from . import nccl  # lazy: only beside tensorplug-cuda; cupy itself is imported on first use
        for name, fn in nccl.KERNELS.items():
            lib.impl(name, fn, "CUDA")


def _served(device_type):
    try:
        plugin_api.backend(device_type)
    except (RuntimeError, ValueError, KeyError):
        return False
    return True


@tensorplug.hookimpl
def tensorplug_namespace():
    return {f"distributed.{name}": value for name, value in _NAMES.items()}


__all__ = ["api", "group", "kernels"]
