"""The continuous uniform distribution on ``[low, high)``."""

from __future__ import annotations

import numbers

from ..ops import random as _random
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Uniform"]


class Uniform(Distribution):
    """``Uniform(low, high)``: uniform on the half-open interval ``[low, high)`` (``low < high``)."""

    has_rsample = True

    @property
    def arg_constraints(self):
        return {"low": constraints.less_than(self.high), "high": constraints.greater_than(self.low)}

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        batch_shape = () if isinstance(low, numbers.Number) and isinstance(high, numbers.Number) \
            else tuple(self.low.shape)
        super().__init__(batch_shape, validate_args=validate_args)

    @property
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return self.high * float("nan")

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=()):
        """``low + u * (high - low)`` with ``u`` uniform on [0, 1): differentiable in ``low`` and ``high``."""
        shape = self._extended_shape(sample_shape)
        rand = _random.rand(shape, dtype=self.low.dtype, device=self.low.device)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lb = self.low.le(value).to(self.low.dtype)
        ub = self.high.gt(value).to(self.low.dtype)
        return lb.mul(ub).log() - (self.high - self.low).log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        result = (value - self.low) / (self.high - self.low)
        return result.clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return (self.high - self.low).log()
