"""Constraints: the sets parameters and samples of a distribution live in (``constraints.positive``...)."""

from __future__ import annotations

from ..ops import factories as _f

__all__ = ["Constraint", "boolean", "real", "real_vector", "positive", "nonnegative", "unit_interval", "simplex",
           "integer_interval", "interval", "greater_than", "greater_than_eq", "less_than", "half_open_interval", "dependent", "dependent_property",
           "lower_cholesky", "positive_definite", "independent", "is_dependent"]


class Constraint:
    """A region of values: :meth:`check` gives a bool tensor, one element per event."""

    is_discrete = False
    event_dim = 0

    def check(self, value):
        raise NotImplementedError

    def __repr__(self):
        return self.__class__.__name__[1:] + "()"


class _Dependent(Constraint):
    """The support depends on other parameters; it cannot be checked by itself."""

    def __init__(self, *, is_discrete=False, event_dim=0):
        self.is_discrete = is_discrete
        self.event_dim = event_dim

    def __call__(self, *, is_discrete=None, event_dim=None):
        return _Dependent(is_discrete=self.is_discrete if is_discrete is None else is_discrete,
                          event_dim=self.event_dim if event_dim is None else event_dim)

    def check(self, x):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint):
    return isinstance(constraint, _Dependent)


class dependent_property(property):
    """A property whose value is a constraint that depends on the distribution's parameters."""

    def __init__(self, fn=None, *, is_discrete=False, event_dim=0):
        super().__init__(fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn):
        return dependent_property(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        n = self.reinterpreted_batch_ndims
        if n:
            result = result.reshape(tuple(result.shape[:result.dim() - n]) + (-1,)).all(-1)
        return result

    def __repr__(self):
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def check(self, value):
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return f"IntegerInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _Real(Constraint):
    def check(self, value):
        return value == value  # False only for NaN


class _GreaterThan(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return self.lower_bound < value

    def __repr__(self):
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _GreaterThanEq(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return self.lower_bound <= value

    def __repr__(self):
        return f"GreaterThanEq(lower_bound={self.lower_bound})"


class _LessThan(Constraint):
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self):
        return f"LessThan(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return f"Interval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _HalfOpenInterval(_Interval):
    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)

    def __repr__(self):
        return f"HalfOpenInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value):
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        lower_triangular = (value.tril() == value).reshape(tuple(value.shape[:-2]) + (-1,)).min(-1)[0]
        positive_diagonal = (value.diagonal(dim1=-2, dim2=-1) > 0).min(-1)[0]
        return lower_triangular & positive_diagonal


class _PositiveDefinite(Constraint):
    event_dim = 2

    def check(self, value):
        from .. import linalg  # lazy: tensorplug.linalg is provided separately and may be missing
        symmetric = value.isclose(value.mT, atol=1e-6).reshape(tuple(value.shape[:-2]) + (-1,)).all(-1)
        batch = tuple(value.shape[:-2])
        flat = value.reshape((-1,) + tuple(value.shape[-2:]))
        ok = []
        for i in range(flat.shape[0]):
            try:
                linalg.cholesky(flat[i])
                ok.append(True)
            except (RuntimeError, ValueError):  # PyTorch's LinAlgError is a RuntimeError
                ok.append(False)
        return symmetric & _f.tensor(ok, device=value.device).reshape(batch)


dependent = _Dependent()
boolean = _Boolean()
real = _Real()
real_vector = _IndependentConstraint(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
unit_interval = _Interval(0.0, 1.0)
simplex = _Simplex()
lower_cholesky = _LowerCholesky()
positive_definite = _PositiveDefinite()
integer_interval = _IntegerInterval
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
interval = _Interval
half_open_interval = _HalfOpenInterval
independent = _IndependentConstraint
