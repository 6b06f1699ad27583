"""Native view kernels: numpy views instead of the core's generic as_strided path.

The core validates every view op in its ``check`` (so errors are the same on
every backend) and serves other backends through CompositeExplicitAutograd
kernels built on ``as_strided``. On the CPU, numpy's own view operations are
several times cheaper than rebuilding an array from storage metadata, and
views (``weight.t()``, ``x[0]``, ``x.view(...)``) sit on every training step.
Only ops whose numpy strides equal PyTorch's are here (numpy gives a new axis
stride 0 where PyTorch computes one, so ``unsqueeze`` is native only for
C-contiguous inputs, where a reshape gives PyTorch's strides).
"""

from __future__ import annotations

from tensorplug.plugin_api import (wrap_view as make_view, infer_size as _infer_size, squeeze_dims, select_index,
                                   slice_bounds, view_impl as _view_impl, unsqueeze_impl as _unsqueeze_impl)

_ALL = slice(None)


def view(self, size):
    # the core's check has validated the view with PyTorch's rules; only -1 needs resolving here
    if -1 in size:
        size = _infer_size(size, self._data.size)
    arr = self._data.view()
    try:
        arr.shape = size
    except AttributeError:  # numpy would copy where the strides still allow a view
        return _view_impl(self, size)
    return make_view(self, arr)


def permute(self, dims):
    # the core's check has validated dims (a permutation, in range); numpy takes negative ones as they are
    return make_view(self, self._data.transpose(dims))


def alias(self):
    return make_view(self, self._data.view())


def squeeze(self, dim=None):
    return make_view(self, self._data.squeeze(squeeze_dims(self, dim)))


def unsqueeze(self, dim):
    a = self._data
    if not a.flags.c_contiguous:
        return _unsqueeze_impl(self, dim)
    # reshaping a C-contiguous array gives the new axis PyTorch's stride (numpy's None index gives 0)
    d = dim + a.ndim + 1 if dim < 0 else dim
    return make_view(self, a.reshape(a.shape[:d] + (1,) + a.shape[d:]))


def select(self, dim, index):
    d, i = select_index(self, dim, index)
    return make_view(self, self._data[(_ALL,) * d + (i, Ellipsis)])


def slice_(self, dim=0, start=None, end=None, step=1):
    d, start, end, step = slice_bounds(self, dim, start, end, step)
    return make_view(self, self._data[(_ALL,) * d + (slice(start, end, step), Ellipsis)])


KERNELS = {
    "view": view, "permute": permute, "alias": alias, "squeeze.dims": squeeze,
    "unsqueeze": unsqueeze, "select.int": select, "slice.Tensor": slice_,
}
