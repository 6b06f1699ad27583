"""Composite operators: defined once, as decompositions into primitives.

Each is a CompositeImplicitAutograd kernel, so every backend gets it for free
and autograd (and any transform) differentiates it through its pieces. The
decompositions use the public tensor API, which resolves at call time.
"""

from __future__ import annotations

import math

from .. import dtypes as _dt
from ..tensor import _wrap_dim
from ._lib import defop, public, attach
from .reductions import reduce_dims
from .promotion import result_type


def _tp():
    import tensorplug
    return tensorplug


def _float_input(name, self, dtype=None):
    d = dtype or self._dtype
    if not d.is_floating_point:
        raise RuntimeError(f"{name}(): could not infer output dtype. Input dtype must be either a floating "
                           f"point or complex dtype. Got: {_pt(d)}")


def _pt(d):
    from .promotion import _pt_name
    return _pt_name(d)


def _count(self, dims):
    n = 1
    for d in dims:
        n *= self._shape[d]
    return n


# -- statistics -------------------------------------------------------------------------
def _mean(self, dim=None, keepdim=False, dtype=None):
    x = self if dtype is None else self.to(dtype)
    dims = reduce_dims(x, dim)
    return x.sum(dims, keepdim=keepdim) / _count(x, dims)


mean = defop("mean.dim(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
             check=lambda self, dim=None, keepdim=False, dtype=None: (_float_input("mean", self, dtype),
                                                                      reduce_dims(self, dim)),
             composite=_mean)


def _var(self, dim=None, correction=None, keepdim=False):
    dims = reduce_dims(self, dim)
    c = 1 if correction is None else correction
    mu = self.sum(dims, keepdim=True) / _count(self, dims)
    diff = self - mu
    ssq = (diff * diff).sum(dims, keepdim=keepdim)
    return ssq / max(_count(self, dims) - c, 0)


def _check_var(self, dim=None, correction=None, keepdim=False):
    _float_input("var", self)
    reduce_dims(self, dim)


var = defop("var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False)"
            " -> Tensor", check=_check_var, composite=_var)
std = defop("std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False)"
            " -> Tensor", check=_check_var,
            composite=lambda self, dim=None, correction=None, keepdim=False:
            var._op.positional(self, dim, correction, keepdim).sqrt())


def _stat_method(entry):
    def method(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        if isinstance(unbiased, bool) or unbiased is None:
            pass
        else:  # var(x, 0): a positional int after dim is PyTorch's old signature too
            raise TypeError("unbiased must be a bool")
        if unbiased is not None and correction is not None:
            raise RuntimeError("Cannot specify both unbiased and correction")
        if unbiased is not None:
            correction = 1 if unbiased else 0
        if isinstance(dim, int):
            dim = (dim,)
        return entry(self, dim, correction=correction, keepdim=keepdim)
    method.__doc__ = entry.__doc__
    return method


def _logsumexp(self, dim, keepdim=False):
    tp = _tp()
    x = self if self._dtype.is_floating_point else self.to(_dt.get_default_dtype())
    dims = reduce_dims(x, dim)
    if x.numel() == 0:
        return (x.exp().sum(dims, keepdim=keepdim)).log()
    m = x.amax(dims, keepdim=True)
    m = tp.where(m.abs() == math.inf, tp.zeros_like(m), m).detach()
    out = (x - m).exp().sum(dims, keepdim=True).log() + m
    return out if keepdim else out.squeeze(dims)


logsumexp = defop("logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor", composite=_logsumexp)


def _softmax(self, dim, dtype=None):
    x = self.to(dtype) if dtype is not None else (
        self if self._dtype.is_floating_point else self.to(_dt.get_default_dtype()))
    if x.numel() == 0:
        return x.clone()
    m = x.amax(dim, keepdim=True).detach()
    e = (x - m).exp()
    return e / e.sum(dim, keepdim=True)


def _log_softmax(self, dim, dtype=None):
    x = self.to(dtype) if dtype is not None else (
        self if self._dtype.is_floating_point else self.to(_dt.get_default_dtype()))
    if x.numel() == 0:
        return x.clone()
    return x - logsumexp(x, (dim,), True)


def _check_dim(self, dim, *rest):
    _wrap_dim(dim, len(self._shape))


softmax = defop("softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", check=_check_dim,
                composite=_softmax)
log_softmax = defop("log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", check=_check_dim,
                    composite=_log_softmax)


# -- activations --------------------------------------------------------------------------
def _zero_like_scalar(self):
    return _tp().zeros((), dtype=self._dtype, device=self._device)


def _check_relu(self):
    if self._dtype is _dt.bool:
        raise RuntimeError("\"clamp_min_cpu\" not implemented for 'Bool'")


relu = defop("relu(Tensor self) -> Tensor", check=_check_relu, composite=lambda self: _tp().clamp(self, 0))


def _isnan(self):
    return self != self


def _isinf(self):
    if not self._dtype.is_floating_point:
        return _tp().zeros(self._shape, dtype=_dt.bool, device=self._device)
    return self.abs() == math.inf


def _isfinite(self):
    if not self._dtype.is_floating_point:
        return _tp().ones(self._shape, dtype=_dt.bool, device=self._device)
    return (self - self) == 0


isnan = defop("isnan(Tensor self) -> Tensor", composite=_isnan)
isinf = defop("isinf(Tensor self) -> Tensor", composite=_isinf)
isfinite = defop("isfinite(Tensor self) -> Tensor", composite=_isfinite)


def _leaky_relu(self, negative_slope=0.01):
    return _tp().where(self > 0, self, self * negative_slope)


leaky_relu = defop("leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor", composite=_leaky_relu)


def _gelu(self, approximate="none"):
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (self + 0.044715 * self * self * self)
        return 0.5 * self * (1.0 + inner.tanh())
    return 0.5 * self * (1.0 + (self * (1.0 / math.sqrt(2.0))).erf())


def _check_gelu(self, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh.")


gelu = defop("gelu(Tensor self, *, str approximate='none') -> Tensor", check=_check_gelu, composite=_gelu)
silu = defop("silu(Tensor self) -> Tensor", composite=lambda self: self * self.sigmoid())
elu = defop("elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor",
            composite=lambda self, alpha=1, scale=1, input_scale=1: _tp().where(
                self > 0, self * scale, ((self * input_scale).exp() - 1) * (alpha * scale)))


def _softplus(self, beta=1, threshold=20):
    bx = self * beta
    return _tp().where(bx > threshold, self, bx.exp().log1p() / beta)


softplus = defop("softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor", composite=_softplus)


def _check_linear(input, weight, bias=None):
    if weight.dim() not in (1, 2):
        raise RuntimeError(f"linear(): weight must be 1-D or 2-D, got {weight.dim()}-D")


def _linear(input, weight, bias=None):
    out = input.matmul(weight.t())
    return out if bias is None else out + bias


linear = defop("linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor", check=_check_linear,
               composite=_linear)


# -- joining and splitting -------------------------------------------------------------------
def _check_stack(tensors, dim=0):
    if len(tensors) == 0:
        raise RuntimeError("stack expects a non-empty TensorList")
    s0 = tensors[0]._shape
    for i, t in enumerate(tensors):
        if t._shape != s0:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(s0)} at entry 0 "
                               f"and {list(t._shape)} at entry {i}")
    _wrap_dim(dim, len(s0) + 1)


def _stack(tensors, dim=0):
    d = _wrap_dim(dim, len(tensors[0]._shape) + 1)
    return _tp().cat([t.unsqueeze(d) for t in tensors], d)


stack = defop("stack(Tensor[] tensors, int dim=0) -> Tensor", check=_check_stack, composite=_stack)


def _split(self, split_size, dim=0):
    d = _wrap_dim(dim, len(self._shape))
    n = self._shape[d]
    if split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={split_size}")
    if split_size == 0:
        if n != 0:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
        return [self.narrow(d, 0, 0)]
    return [self.narrow(d, s, min(split_size, n - s)) for s in range(0, max(n, 1), split_size) if s < n or n == 0]


def _split_with_sizes(self, split_sizes, dim=0):
    d = _wrap_dim(dim, len(self._shape))
    if sum(split_sizes) != self._shape[d]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {self._shape[d]} "
                           f"(input tensor's size at dimension {d}), but got split_sizes={list(split_sizes)}")
    out, start = [], 0
    for s in split_sizes:
        out.append(self.narrow(d, start, s))
        start += s
    return out


split = defop("split.Tensor(Tensor self, SymInt split_size, int dim=0) -> Tensor[]", composite=_split)
split_with_sizes = defop("split_with_sizes(Tensor self, SymInt[] split_sizes, int dim=0) -> Tensor[]",
                         composite=_split_with_sizes)


def _chunk(self, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    d = _wrap_dim(dim, len(self._shape))
    n = self._shape[d]
    size = (n + chunks - 1) // chunks
    return _split(self, size, d) if size else _split_with_sizes(self, [0] * chunks, d)


chunk = defop("chunk(Tensor self, int chunks, int dim=0) -> Tensor[]", composite=_chunk)


def _unbind(self, dim=0):
    d = _wrap_dim(dim, len(self._shape))
    return [self.select(d, i) for i in range(self._shape[d])]


unbind = defop("unbind.int(Tensor self, int dim=0) -> Tensor[]", composite=_unbind)


def _tri_mask(self, diagonal, upper):
    tp = _tp()
    if len(self._shape) < 2:
        raise RuntimeError(f"{'triu' if upper else 'tril'}: input tensor must have at least 2 dimensions")
    r, c = self._shape[-2], self._shape[-1]
    rows = tp.arange(r, device=self._device).unsqueeze(1)
    cols = tp.arange(c, device=self._device).unsqueeze(0)
    return (cols - rows) >= diagonal if upper else (cols - rows) <= diagonal


def _tril(self, diagonal=0):
    return _tp().where(_tri_mask(self, diagonal, False), self, _zero_like_scalar(self))


def _triu(self, diagonal=0):
    return _tp().where(_tri_mask(self, diagonal, True), self, _zero_like_scalar(self))


tril = defop("tril(Tensor self, int diagonal=0) -> Tensor", composite=_tril)
triu = defop("triu(Tensor self, int diagonal=0) -> Tensor", composite=_triu)


def _flip(self, dims):
    tp = _tp()
    n = len(self._shape)
    out = self
    seen = set()
    for d in dims:
        d = _wrap_dim(d, n)
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)
        size = self._shape[d]
        out = out.index_select(d, tp.arange(size - 1, -1, -1, device=self._device))
    return out if dims else self.clone()


flip = defop("flip(Tensor self, int[] dims) -> Tensor", composite=_flip)


def _roll(self, shifts, dims=()):
    tp = _tp()
    if not dims:
        if len(shifts) != 1:
            raise RuntimeError("roll: shifts must be a single value when dims is empty")
        return _roll(self.flatten(), shifts, (0,)).view(self._shape)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    out = self
    for s, d in zip(shifts, dims):
        d = _wrap_dim(d, len(self._shape))
        n = self._shape[d]
        if n == 0:
            continue
        idx = (tp.arange(n, device=self._device) - s) % n
        out = out.index_select(d, idx)
    return out


roll = defop("roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor", composite=_roll)


def _isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    tp = _tp()
    if self._dtype is not other._dtype:
        raise RuntimeError(f"{_pt(self._dtype)} did not match {_pt(other._dtype)}")
    if rtol < 0 or atol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}" if rtol < 0 else
                           f"atol must be greater than or equal to zero, but got {atol}")
    if not self._dtype.is_floating_point:
        a, b = self.double(), other.double()
    else:
        a, b = self, other
    close = a == b
    if equal_nan and self._dtype.is_floating_point:
        close = close | (a.isnan() & b.isnan())
    finite = (a - b).abs() <= atol + rtol * b.abs()
    return close | (finite & a.isfinite() & b.isfinite())


isclose = defop("isclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False)"
                " -> Tensor", composite=_isclose)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when every element of ``input`` is close to ``other`` (see :func:`isclose`)."""
    return bool(isclose(input, other, rtol, atol, equal_nan).all().item())


def _outer(self, vec2):
    return self.unsqueeze(1) * vec2.unsqueeze(0)


outer = defop("outer(Tensor self, Tensor vec2) -> Tensor", composite=_outer)


def _addmm(self, mat1, mat2, beta=1, alpha=1):
    prod = mat1.matmul(mat2)
    if alpha != 1:
        prod = prod * alpha
    return prod + (self if beta == 1 else self * beta)


addmm = defop("addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
              composite=_addmm)


def _norm(self, p=2, dim=None, keepdim=False):
    x = self.abs()
    if p == math.inf:
        return x.amax(dim or (), keepdim=keepdim)
    if p == 1:
        return x.sum(dim, keepdim=keepdim)
    if p == 2:
        return (x * x).sum(dim, keepdim=keepdim).sqrt()
    return (x ** p).sum(dim, keepdim=keepdim) ** (1.0 / p)


norm = defop("norm.ScalarOpt_dim(Tensor self, Scalar? p=2, int[1] dim=[], bool keepdim=False) -> Tensor",
             composite=lambda self, p=2, dim=(), keepdim=False: _norm(self, 2 if p is None else p,
                                                                      dim or None, keepdim))


def _method_dim_tuple(entry, n_pos=1):
    def method(self, dim=None, *args, **kwargs):
        if isinstance(dim, int):
            dim = (dim,)
        return entry(self, dim, *args, **kwargs)
    method.__doc__ = entry.__doc__
    return method


def _mean_method(self, dim=None, keepdim=False, *, dtype=None):
    if isinstance(dim, int):
        dim = (dim,)
    return mean(self, dim, keepdim, dtype=dtype)


def _logsumexp_method(self, dim, keepdim=False):
    return logsumexp(self, (dim,) if isinstance(dim, int) else dim, keepdim)


def _split_method(self, split_size_or_sections, dim=0):
    if isinstance(split_size_or_sections, int):
        return tuple(split(self, split_size_or_sections, dim))
    return tuple(split_with_sizes(self, tuple(split_size_or_sections), dim))


def _norm_method(self, p=2, dim=None, keepdim=False):
    if isinstance(dim, int):
        dim = (dim,)
    return norm(self, p, dim or (), keepdim)


def _flip_method(self, *dims):
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    return flip(self, dims)


def _roll_method(self, shifts, dims=None):
    return roll(self, shifts, () if dims is None else dims)


for _name, _fn in {"mean": _mean_method, "var": _stat_method(var), "std": _stat_method(std),
                   "logsumexp": _logsumexp_method, "softmax": softmax, "log_softmax": log_softmax,
                   "relu": relu, "split": _split_method,
                   "chunk": lambda self, chunks, dim=0: tuple(chunk(self, chunks, dim)),
                   "unbind": lambda self, dim=0: tuple(unbind(self, dim)), "tril": tril, "triu": triu,
                   "flip": _flip_method, "roll": _roll_method, "isclose": isclose,
                   "allclose": allclose, "outer": outer, "norm": _norm_method,
                   "addmm": addmm, "isnan": isnan, "isinf": isinf, "isfinite": isfinite}.items():
    attach(_name, _fn)
    public(_name, _fn)

for _name, _fn in {"stack": stack, "linear": linear, "gelu": gelu, "silu": silu, "elu": elu,
                   "leaky_relu": leaky_relu, "softplus": softplus, "split": lambda t, s, dim=0: _split_method(t, s, dim),
                   "chunk": lambda t, c, dim=0: tuple(chunk(t, c, dim)),
                   "unbind": lambda t, dim=0: tuple(unbind(t, dim)),
                   "flip": lambda t, dims: flip(t, tuple(dims)), "hstack": lambda ts: _tp().cat(
                       list(ts), 1 if ts[0].dim() > 1 else 0),
                   "vstack": lambda ts: _tp().cat([t if t.dim() > 1 else t.unsqueeze(0) for t in ts], 0)}.items():
    public(_name, _fn)
