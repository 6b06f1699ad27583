"""Shape ops that copy: ``tril``, ``triu``, ``flip`` and ``roll`` (the views are in :mod:`.views`).

All four are CompositeImplicitAutograd: ``tril``/``triu`` a ``where`` over an
``arange`` mask, ``flip`` an ``index_select`` per dim with a reversed
``arange``, ``roll`` a ``cat`` of two ``narrow`` views per dim. Their gradients
come through those pieces.
"""

from __future__ import annotations

from ..tensor import _wrap_dim
from ._common import document as _document, dims_arg as _dims
from ._lib import defop, attach, public
from .comparison import where_fn as _where
from .factories import arange
from .indexing import index_select
from .joining import cat
from .memory import clone
from .pointwise import zero_of as _zero_of
from .views import narrow, reshape, view, unsqueeze


# -- tril, triu ---------------------------------------------------------------------------------------
def _check_tri(name):
    def check(self, diagonal=0):
        if len(self._shape) < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    return check


def _tri_keep(self, diagonal, upper):
    """Bool (rows, cols) mask of the elements tril (``upper`` False) or triu keeps."""
    rows, cols = self._shape[-2], self._shape[-1]
    offset = arange(cols, device=self._device) - unsqueeze(arange(rows, device=self._device), 1)
    return offset >= diagonal if upper else offset <= diagonal


tril = _document(defop("tril(Tensor self, int diagonal=0) -> Tensor", check=_check_tri("tril"),
                       composite=lambda self, diagonal=0: _where(_tri_keep(self, diagonal, False), self,
                                                                 _zero_of(self))),
                 "The lower triangle (j - i <= diagonal) of the last two dims; the rest zeroed.")
triu = _document(defop("triu(Tensor self, int diagonal=0) -> Tensor", check=_check_tri("triu"),
                       composite=lambda self, diagonal=0: _where(_tri_keep(self, diagonal, True), self,
                                                                 _zero_of(self))),
                 "The upper triangle (j - i >= diagonal) of the last two dims; the rest zeroed.")


# -- flip -----------------------------------------------------------------------------------------------
def _check_flip(self, dims):
    n = len(self._shape)
    seen = set()
    for d in dims:
        w = _wrap_dim(d, n)
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.add(w)


def _flip(self, dims):
    out = self
    n = len(self._shape)
    for d in dims:
        d = _wrap_dim(d, n)
        size = self._shape[d] if n else 1
        if size > 1:
            out = index_select(out, d, arange(size - 1, -1, -1, device=self._device))
    return clone(self) if out is self else out


flip = _document(defop("flip(Tensor self, int[] dims) -> Tensor", check=_check_flip, composite=_flip),
                 "A copy with the order of elements reversed along each of ``dims``.")


def _flip_method(self, *dims, **kwargs):
    if kwargs:
        if dims or set(kwargs) != {"dims"}:
            raise TypeError(f"flip() got an unexpected keyword argument {next(k for k in kwargs if k != 'dims')!r}"
                            if set(kwargs) - {"dims"} else "flip() got multiple values for argument 'dims'")
        dims = (kwargs["dims"],)
    if not dims:
        raise TypeError('flip() missing 1 required positional arguments: "dims"')
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    return flip(self, dims)


_flip_method.__doc__ = "``x.flip(0, 1)``, ``x.flip((0, 1))`` or ``x.flip(dims=(0, 1))``: " + flip.__doc__


# -- roll -----------------------------------------------------------------------------------------------
def _check_roll(self, shifts, dims=()):
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims and len(shifts) == 1:
        return
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    if 0 in self._shape:  # PyTorch returns a copy of an empty tensor before looking at dims
        return
    n = len(self._shape)
    for d in dims:
        if n == 0:
            raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
        _wrap_dim(d, n)


def _roll(self, shifts, dims=()):
    if 0 in self._shape:
        return clone(self)
    if not dims:
        return view(_roll(reshape(self, (-1,)), shifts, (0,)), self._shape)
    out = self
    for s, d in zip(shifts, dims):
        d = _wrap_dim(d, len(self._shape))
        n = self._shape[d]
        s %= n
        if s:
            out = cat([narrow(out, d, n - s, s), narrow(out, d, 0, n - s)], d)
    return clone(self) if out is self else out


roll = defop("roll(Tensor self, int[1] shifts, int[1] dims=[]) -> Tensor", check=_check_roll, composite=_roll)


def roll_fn(input, shifts, dims=None):
    """Elements shifted by ``shifts`` along ``dims`` (ints or tuples), wrapping around; without ``dims``
    the flattened tensor is rolled and the shape restored."""
    return roll(input, _dims(shifts), () if dims is None else _dims(dims))


# -- Tensor methods and tensorplug.* functions -------------------------------------------------------
for _name, _fn in {"tril": tril, "triu": triu, "roll": roll_fn}.items():
    attach(_name, _fn)
    public(_name, _fn)
attach("flip", _flip_method)
public("flip", flip)
