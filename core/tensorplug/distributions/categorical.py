"""The categorical distribution over ``{0, ..., K - 1}``."""

from __future__ import annotations

from ..autograd import no_grad
from ..ops import factories as _f
from ..ops import random as _random
from ..ops.promotion import broadcast_shapes_fn as _broadcast_shapes
from . import constraints
from .distribution import Distribution
from .utils import finfo_min, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]


class Categorical(Distribution):
    """``Categorical(probs=p)`` or ``Categorical(logits=l)``: index ``i`` with probability ``p[..., i]``.

    ``probs`` are normalized over the last dim (they need not sum to 1);
    ``logits`` are unnormalized log-probabilities. The last dim holds the
    ``K`` categories, the others are the batch shape.
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        batch_shape = tuple(self._param.shape[:-1]) if self._param.dim() > 1 else ()
        super().__init__(batch_shape, validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return tuple(self._param.shape)

    @property
    def mean(self):
        return _f.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype, device=self.probs.device)

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return _f.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype, device=self.probs.device)

    def sample(self, sample_shape=()):
        """int64 category indices of shape ``sample_shape + batch_shape``."""
        sample_shape = tuple(sample_shape) if not isinstance(sample_shape, int) else (sample_shape,)
        n = 1
        for s in sample_shape:
            n *= s
        with no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            samples_2d = _random.multinomial(probs_2d, n, True).T
            return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        shape = _broadcast_shapes(value.shape, self.logits.shape)
        value = value.expand(shape)
        log_pmf = self.logits.expand(shape)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self):
        logits = self.logits.clamp(min=finfo_min(self.logits.dtype))
        p_log_p = logits * self.probs
        return -p_log_p.sum(-1)

    def enumerate_support(self, expand=True):
        n = self._num_events
        values = _f.arange(n, dtype=_f.tensor(0).dtype, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + self._batch_shape)
        return values
