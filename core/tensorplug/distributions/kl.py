"""``kl_divergence(p, q)`` and the ``register_kl`` registry of closed forms."""

from __future__ import annotations

import math

from ..nn import functional as F
from .bernoulli import Bernoulli
from .categorical import Categorical
from .independent import Independent
from .normal import Normal
from .uniform import Uniform
from .utils import sum_rightmost

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY: dict = {}
_KL_MEMOIZE: dict = {}


def register_kl(type_p, type_q):
    """Decorator registering ``fn(p, q)`` as the KL divergence of ``type_p`` from ``type_q`` instances."""
    if not isinstance(type_p, type) or not isinstance(type_q, type):
        raise TypeError(f"Expected type_p and type_q to be subclasses of Distribution, but got {type_p} and "
                        f"{type_q}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()
        return fun
    return decorator


def _dispatch_kl(type_p, type_q):
    matches = [(super_p, super_q) for super_p, super_q in _KL_REGISTRY
               if issubclass(type_p, super_p) and issubclass(type_q, super_q)]
    if not matches:
        return None
    # the most specific match: smallest distance in both method resolution orders
    def rank(pair):
        return (type_p.__mro__.index(pair[0]), type_q.__mro__.index(pair[1]))
    return _KL_REGISTRY[min(matches, key=rank)]


def kl_divergence(p, q):
    """``KL(p || q)``, one value per batch element, from the registered closed form for ``(type(p), type(q))``."""
    key = (type(p), type(q))
    try:
        fun = _KL_MEMOIZE[key]
    except KeyError:
        fun = _KL_MEMOIZE[key] = _dispatch_kl(type(p), type(q))
    if fun is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {p.__class__.__name__} and q type "
                                  f"{q.__class__.__name__}")
    return fun(p, q)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = t.masked_fill((q.probs == 0).expand(t.shape), math.inf)
    t = t.masked_fill((p.probs == 0).expand(t.shape), 0)
    return t.sum(-1)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    t1 = t1.masked_fill(q.probs == 0, math.inf).masked_fill(p.probs == 0, 0)
    t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    t2 = t2.masked_fill(q.probs == 1, math.inf).masked_fill(p.probs == 1, 0)
    return t1 + t2


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return result.masked_fill((q.low > p.low) | (q.high < p.high), math.inf)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    result = kl_divergence(p.base_dist, q.base_dist)
    return sum_rightmost(result, p.reinterpreted_batch_ndims)
