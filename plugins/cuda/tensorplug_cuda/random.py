"""Per-device random generators: ``cuda:i`` has its own default generator, as in PyTorch.

Each is a :class:`tensorplug.Generator` for its device (a PCG64 stream), seeded by
``tensorplug.manual_seed`` (through the backend record) and ``tensorplug.cuda.manual_seed`` /
``manual_seed_all``. The library's random kernels draw from the current device's generator (the
device guard makes that the tensor's device) on the host and copy the draws to the device: the same
seed gives the same values on a GPU, in the simulated mode and (for the same sampler) on the CPU.
"""

from __future__ import annotations

import tensorplug
from tensorplug import plugin_api as _api

from .backend import BACKEND

_GENS: dict = {}      # device index -> Generator
_SEED = [None]        # the last seed given to every device (None: the process's initial seed)


def default_generator(index):
    """The default generator of ``cuda:index`` (created on first use)."""
    g = _GENS.get(index)
    if g is None:
        g = tensorplug.Generator(f"cuda:{index}")
        g.manual_seed(_api.initial_seed() if _SEED[0] is None else _SEED[0])
        _GENS[index] = g
    return g


def host_rng(generator=None):
    """The numpy stream a random kernel draws from: ``generator``'s, or the current device's default."""
    if generator is None:
        generator = default_generator(BACKEND.drv.current_device())
    return _api.host_rng(generator)


def seed_all(seed):
    """Seed every device's default generator (``tensorplug.manual_seed`` and ``manual_seed_all``)."""
    _SEED[0] = int(seed)
    for g in _GENS.values():
        g.manual_seed(seed)


BACKEND.seeders.append(seed_all)
