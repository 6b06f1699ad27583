"""The normal (Gaussian) distribution."""

from __future__ import annotations

import math
import numbers

from ..autograd import no_grad
from ..ops import random as _random
from ..ops.math_ops import erf
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Normal"]


class Normal(Distribution):
    """``Normal(loc, scale)``: mean ``loc``, standard deviation ``scale`` (> 0), broadcast together."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        batch_shape = () if isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number) \
            else tuple(self.loc.shape)
        super().__init__(batch_shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def sample(self, sample_shape=()):
        """Draws from ``tensorplug.normal`` (no gradients)."""
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return _random.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=()):
        """``loc + eps * scale`` with standard normal ``eps``: differentiable in ``loc`` and ``scale``."""
        shape = self._extended_shape(sample_shape)
        eps = _random.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        log_scale = math.log(self.scale) if isinstance(self.scale, numbers.Real) else self.scale.log()
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()
