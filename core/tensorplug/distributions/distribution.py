"""The :class:`Distribution` base class: shapes, argument and sample validation, sampling entry points."""

from __future__ import annotations

import warnings

from ..autograd import no_grad
from ..tensor import Tensor
from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]


def _shape(s):
    return tuple(s) if not isinstance(s, int) else (s,)


class Distribution:
    """Base class of probability distributions, as ``torch.distributions.Distribution``.

    ``batch_shape`` is the shape of independent (not necessarily identical)
    distributions, ``event_shape`` the shape of one draw. With
    ``validate_args`` (on by default, as in PyTorch) the parameters are checked
    against ``arg_constraints`` when the distribution is built and values
    against ``support`` in :meth:`log_prob`, raising PyTorch's ValueErrors.
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        """Turn validation on or off for distributions built without ``validate_args``."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = _shape(batch_shape)
        self._event_shape = _shape(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                              "`arg_constraints = {}` or initialize the distribution with `validate_args=False` "
                              "to turn off validation.", stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                    continue
                value = getattr(self, param)
                if not bool(constraint.check(value).all()):
                    raise ValueError(f"Expected parameter {param} ({type(value).__name__} of shape "
                                     f"{tuple(value.shape)}) of distribution {self!r} to satisfy the constraint "
                                     f"{constraint!r}, but found invalid values:\n{value}")

    @property
    def batch_shape(self):
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self):
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self):
        """``{parameter name: Constraint}`` the parameters must satisfy."""
        raise NotImplementedError

    @property
    def support(self):
        """The :class:`~constraints.Constraint` of the values this distribution takes."""
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError(f"{self.__class__} does not implement mean")

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError(f"{self.__class__} does not implement variance")

    @property
    def stddev(self):
        """The standard deviation (the square root of :attr:`variance`)."""
        return self.variance.sqrt()

    def sample(self, sample_shape=()):
        """A sample of shape ``sample_shape + batch_shape + event_shape``, without gradients."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        """A reparameterized sample: differentiable with respect to the parameters."""
        raise NotImplementedError

    def sample_n(self, n):
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning)
        return self.sample((n,))

    def log_prob(self, value):
        """The log of the probability density (or mass) at ``value``."""
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def entropy(self):
        """The entropy, one value per batch element."""
        raise NotImplementedError

    def perplexity(self):
        """``exp(entropy)``."""
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=()):
        return _shape(sample_shape) + self._batch_shape + self._event_shape

    def _validate_sample(self, value):
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        shape = tuple(value.shape)
        event_dim_start = len(shape) - len(self._event_shape)
        if shape[event_dim_start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: {shape} vs "
                             f"{self._event_shape}.")
        expected = self._batch_shape + self._event_shape
        for i, j in zip(reversed(shape), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {shape} vs {expected}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample validation. Please "
                          "initialize the distribution with `validate_args=False` to turn off validation.",
                          stacklevel=2)
            return
        if not bool(support.check(value).all()):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {shape}) to be within the "
                             f"support ({support!r}) of the distribution {self!r}, but found invalid "
                             f"values:\n{value}")

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else tuple(self.__dict__[p].shape)}"
                         for p in names)
        return self.__class__.__name__ + "(" + args + ")"
