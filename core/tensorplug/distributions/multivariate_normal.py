"""The multivariate normal distribution, parameterized by a covariance, precision or lower Cholesky factor.

Written against ``tensorplug.linalg.cholesky`` and ``tensorplug.linalg.solve_triangular``.
"""

from __future__ import annotations

import math

from ..ops import factories as _f
from ..ops import random as _random
from ..ops.promotion import broadcast_shapes_fn as _broadcast_shapes
from . import constraints
from .distribution import Distribution
from .utils import lazy_property

__all__ = ["MultivariateNormal"]


def _linalg():
    from .. import linalg  # lazy: tensorplug.linalg loads on first use (and comes from its own module)
    return linalg


def _batch_mv(bmat, bvec):
    return (bmat @ bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """``x^T (L L^T)^-1 x`` for batches of lower-triangular ``L`` and vectors ``x`` (broadcast)."""
    shape = _broadcast_shapes(tuple(bL.shape[:-2]), tuple(bx.shape[:-1]))
    n = bx.shape[-1]
    L = bL.expand(shape + (n, n))
    x = bx.expand(shape + (n,))
    m = _linalg().solve_triangular(L, x.unsqueeze(-1), upper=False).squeeze(-1)
    return m.pow(2).sum(-1)


def _precision_to_scale_tril(P):
    Lf = _linalg().cholesky(P.flip((-2, -1)))
    L_inv = Lf.flip((-2, -1)).transpose(-2, -1)
    Id = _f.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return _linalg().solve_triangular(L_inv, Id, upper=False)


class MultivariateNormal(Distribution):
    """``MultivariateNormal(loc, covariance_matrix=... | precision_matrix=... | scale_tril=...)``.

    Exactly one of the three matrix parameters is given; ``scale_tril`` is a
    lower-triangular factor with a positive diagonal (``cov = L L^T``).
    ``loc`` has the event size as its last dim; the batch shape broadcasts
    ``loc.shape[:-1]`` with the matrix's leading dims.
    """

    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        n = loc.shape[-1]
        if scale_tril is not None:
            if scale_tril.dim() < 2:
                raise ValueError("scale_tril matrix must be at least two-dimensional, with optional leading batch "
                                 "dimensions")
            batch_shape = _broadcast_shapes(tuple(scale_tril.shape[:-2]), tuple(loc.shape[:-1]))
            self.scale_tril = scale_tril.expand(batch_shape + (-1, -1))
        elif covariance_matrix is not None:
            if covariance_matrix.dim() < 2:
                raise ValueError("covariance_matrix must be at least two-dimensional, with optional leading batch "
                                 "dimensions")
            batch_shape = _broadcast_shapes(tuple(covariance_matrix.shape[:-2]), tuple(loc.shape[:-1]))
            self.covariance_matrix = covariance_matrix.expand(batch_shape + (-1, -1))
        else:
            if precision_matrix.dim() < 2:
                raise ValueError("precision_matrix must be at least two-dimensional, with optional leading batch "
                                 "dimensions")
            batch_shape = _broadcast_shapes(tuple(precision_matrix.shape[:-2]), tuple(loc.shape[:-1]))
            self.precision_matrix = precision_matrix.expand(batch_shape + (-1, -1))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, (n,), validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = _linalg().cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        Id = _f.eye(L.shape[-1], dtype=L.dtype, device=L.device)
        L_inv = _linalg().solve_triangular(L, Id.expand(L.shape), upper=False)
        return (L_inv.mT @ L_inv).expand(self._batch_shape + self._event_shape + self._event_shape)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=()):
        """``loc + L @ eps`` with standard normal ``eps``: differentiable in every parameter."""
        shape = self._extended_shape(sample_shape)
        eps = _random.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - half_log_det

    def entropy(self):
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        if len(self._batch_shape) == 0:
            return H
        return H.expand(self._batch_shape)
