"""CPU random kernels: numpy samplers drawing from the generator's PCG64 stream.

The core has checked ranges, dtypes and the generator's device; kernels
take the stream from ``host_rng(generator)`` (the default generator of the
library's device when ``generator`` is None) and hand host draws to ``from_host``, so seeding and saved states behave the same as for
any other backend that draws from it.
"""

from __future__ import annotations

import numpy as np

import tensorplug
from tensorplug.plugin_api import random_bounds

from .kernels import wrap, write
from .xp import xp, host_rng, from_host


def _sample_dtype(dtype):
    """numpy samples float32 or float64; half types are drawn in float32 and rounded."""
    return xp.float64 if dtype is tensorplug.float64 else xp.float32


def uniform_(self, from_=0.0, to=1.0, generator=None):
    u = host_rng(generator).random(self._shape, dtype=_sample_dtype(self._dtype))
    if from_ != 0.0 or to != 1.0:
        u *= to - from_
        u += from_
    return write(self, from_host(u))


def normal_(self, mean=0.0, std=1.0, generator=None):
    z = host_rng(generator).standard_normal(self._shape, dtype=_sample_dtype(self._dtype))
    if std != 1.0:
        z *= std
    if mean != 0.0:
        z += mean
    return write(self, from_host(z))


def exponential_(self, lambd=1.0, generator=None):
    e = host_rng(generator).standard_exponential(self._shape, dtype=_sample_dtype(self._dtype))
    e[e == 0] = np.finfo(e.dtype).tiny  # PyTorch's support is (0, inf): never zero
    return write(self, from_host(e / e.dtype.type(lambd) if lambd != 1.0 else e))


def geometric_(self, p, generator=None):
    # the number of the first successful trial: 1, 2, ...
    return write(self, from_host(host_rng(generator).geometric(p, self._shape)))


def cauchy_(self, median=0.0, sigma=1.0, generator=None):
    c = host_rng(generator).standard_cauchy(self._shape).astype(_sample_dtype(self._dtype))
    return write(self, from_host(c * sigma + median))


def log_normal_(self, mean=1.0, std=2.0, generator=None):
    z = host_rng(generator).standard_normal(self._shape, dtype=_sample_dtype(self._dtype))
    with np.errstate(over="ignore"):
        return write(self, from_host(np.exp(z * std + mean)))


def bernoulli_(self, p=0.5, generator=None):
    return write(self, from_host(host_rng(generator).random(self._shape) < p))


def bernoulli(self, generator=None):
    p = self._data if self._dtype is tensorplug.float64 else self._data.astype(xp.float32)
    draws = from_host(host_rng(generator).random(self._shape, dtype=p.dtype.type)) < p
    return wrap(draws.astype(self._dtype.np), self._dtype)


def random_from_(self, from_, to=None, generator=None):
    low, high = random_bounds(self._dtype, from_, to)
    draws = host_rng(generator).integers(low, high, size=self._shape, dtype=np.int64, endpoint=True)
    return write(self, from_host(draws))


def multinomial(self, num_samples, replacement=False, generator=None):
    rng = host_rng(generator)
    n = self._shape[-1]
    rows = self._data.astype(xp.float64).reshape(-1, n)
    if replacement:
        cdf = xp.cumsum(rows, axis=1)
        cdf /= cdf[:, -1:]
        u = rng.random((rows.shape[0], num_samples))
        out = xp.empty(u.shape, dtype=xp.int64)
        for i in range(rows.shape[0]):
            out[i] = xp.searchsorted(cdf[i], u[i], side="right")
    else:
        # exponential race (what PyTorch does): the k largest p / E are a sample without replacement
        keys = rows / rng.standard_exponential(rows.shape)
        out = xp.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
    return wrap(out.reshape(self._shape[:-1] + (num_samples,)), tensorplug.int64)


def randperm(n, generator=None, dtype=None, device=None):
    d = dtype or tensorplug.int64
    return wrap(host_rng(generator).permutation(n).astype(d.np), d)


KERNELS = {"uniform_": uniform_, "normal_": normal_, "bernoulli_.float": bernoulli_, "bernoulli": bernoulli,
           "random_.from": random_from_, "multinomial": multinomial, "randperm": randperm,
           "exponential_": exponential_, "geometric_": geometric_, "cauchy_": cauchy_, "log_normal_": log_normal_}
