"""``Independent``: reinterpret batch dims of a distribution as event dims."""

from __future__ import annotations

from . import constraints
from .distribution import Distribution
from .utils import sum_rightmost

__all__ = ["Independent"]


class Independent(Distribution):
    """Treat the rightmost ``reinterpreted_batch_ndims`` batch dims of ``base_distribution`` as event dims.

    ``Independent(Normal(loc, scale), 1)`` with ``loc`` of shape ``(B, D)`` is
    a batch of ``B`` diagonal Gaussians over ``D`` values: ``log_prob`` sums
    the base's over the last dim.
    """

    arg_constraints = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        if reinterpreted_batch_ndims > len(base_distribution.batch_shape):
            raise ValueError("Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), actual "
                             f"{reinterpreted_batch_ndims} vs {len(base_distribution.batch_shape)}")
        shape = base_distribution.batch_shape + base_distribution.event_shape
        event_dim = reinterpreted_batch_ndims + len(base_distribution.event_shape)
        batch_shape = shape[:len(shape) - event_dim]
        event_shape = shape[len(shape) - event_dim:]
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self):
        if self.reinterpreted_batch_ndims > 0:
            return False
        return self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self):
        result = self.base_dist.support
        if self.reinterpreted_batch_ndims:
            result = constraints.independent(result, self.reinterpreted_batch_ndims)
        return result

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, sample_shape=()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        log_prob = self.base_dist.log_prob(value)
        return sum_rightmost(log_prob, self.reinterpreted_batch_ndims)

    def entropy(self):
        entropy = self.base_dist.entropy()
        return sum_rightmost(entropy, self.reinterpreted_batch_ndims)

    def __repr__(self):
        return self.__class__.__name__ + f"({self.base_dist}, {self.reinterpreted_batch_ndims})"
