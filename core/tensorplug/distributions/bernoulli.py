"""The Bernoulli distribution over {0, 1}."""

from __future__ import annotations

import numbers

from ..autograd import no_grad
from ..nn import functional as F
from ..ops import random as _random
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Bernoulli"]


class Bernoulli(Distribution):
    """``Bernoulli(probs=p)`` or ``Bernoulli(logits=l)`` (exactly one): 1 with probability ``p = sigmoid(l)``."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, numbers.Number)
            (self.probs,) = broadcast_all(probs)
            param = self.probs
        else:
            is_scalar = isinstance(logits, numbers.Number)
            (self.logits,) = broadcast_all(logits)
            param = self.logits
        self._param = param
        batch_shape = () if is_scalar else tuple(param.shape)
        super().__init__(batch_shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return mode.masked_fill(self.probs == 0.5, float("nan"))

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return tuple(self._param.shape)

    def sample(self, sample_shape=()):
        """0/1 draws (in the parameters' dtype), without gradients."""
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return _random.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")
