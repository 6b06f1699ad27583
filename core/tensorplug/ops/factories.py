"""Tensor factories: tensor, as_tensor, from_numpy, zeros, ones, full, empty, *_like, arange, linspace, eye."""

from __future__ import annotations

import math
import numbers

import numpy as np

from .. import dtypes as _dt
from .. import _state
from .. import backend as _backend
from ..backend import backend_for, canonical_device
from ..dispatch.keys import Dense
from ..device import device as _device
from ..tensor import Tensor, make_tensor, from_host
from . import memory as _mem

__all__ = ["tensor", "as_tensor", "from_numpy", "from_host", "empty", "zeros", "ones", "full", "empty_like",
           "zeros_like", "ones_like", "full_like", "arange", "linspace", "eye", "scalar_tensor_of"]


def _dev(device):
    if device is None:
        return _state.default_device
    if isinstance(device, _device):
        return device
    if isinstance(device, int) and not isinstance(device, bool):
        return _device("cpu", device)
    return _device(device)


def _finish(t, requires_grad):
    if requires_grad:
        if t._dtype.category < _dt.FLOATING:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t.requires_grad_(True)
    return t


def _has_float64_scalar(data):
    """Whether nested lists hold a numpy float64 scalar (it makes the result float64, as in PyTorch)."""
    for x in data:
        if type(x) is np.float64 or isinstance(x, (list, tuple)) and _has_float64_scalar(x):
            return True
    return False


def _infer_dtype(arr, data):
    if isinstance(data, (np.ndarray, np.generic)):
        return _dt.from_numpy_dtype(arr.dtype)
    k = arr.dtype.kind
    if k == "b":
        return _dt.bool
    if k in "iu":
        # Python ints give int64; numpy integer scalars keep their type
        return _dt.from_numpy_dtype(arr.dtype) if arr.dtype.itemsize < 8 else _dt.int64
    if k == "f":
        if arr.dtype != np.float64:
            return _dt.from_numpy_dtype(arr.dtype)
        if isinstance(data, (list, tuple)) and _has_float64_scalar(data):
            return _dt.float64
        return _dt.get_default_dtype()
    if k == "c" and arr.dtype == np.complex128:
        return _dt.get_default_complex_dtype()  # Python complex numbers
    return _dt.from_numpy_dtype(arr.dtype)


def _ragged_error(data):
    """PyTorch's error for nested sequences of unequal lengths (or scalars where sequences belong)."""
    sizes, x = [], data
    while isinstance(x, (list, tuple)):
        sizes.append(len(x))
        if not x:
            break
        x = x[0]

    def walk(x, d):
        if d == len(sizes):
            if isinstance(x, (list, tuple)):
                raise TypeError(f"'{type(x).__name__}' object cannot be interpreted as an integer")
            return
        if not isinstance(x, (list, tuple)):
            raise TypeError("not a sequence")
        if len(x) != sizes[d]:
            raise ValueError(f"expected sequence of length {sizes[d]} at dim {d} (got {len(x)})")
        for y in x:
            walk(y, d + 1)
    walk(data, 0)


def _bad_scalar(data):
    """The error for data that is not numeric: the first offending leaf's type."""
    leaf = data
    while isinstance(leaf, (list, tuple)) and leaf:
        bad = [y for y in leaf if not isinstance(y, (numbers.Number, np.generic)) or isinstance(y, (list, tuple))]
        leaf = bad[0] if bad else leaf[0]
    if isinstance(leaf, str):
        return TypeError(f"new(): invalid data type '{type(leaf).__name__}'")
    return RuntimeError(f"Could not infer dtype of {type(leaf).__name__}")


def _to_array(data):
    if isinstance(data, Tensor):
        return data._host()
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in data):
        return np.stack([_to_array(x) for x in data]) if data else np.zeros(0)
    try:
        arr = np.asarray(data)
    except ValueError:
        _ragged_error(data)
        raise
    except OverflowError:
        raise ValueError("Overflow when unpacking long long") from None
    if arr.dtype == object or arr.dtype.kind in "US":
        leaves = np.ravel(arr)
        if leaves.size and all(isinstance(x, (int, float, np.integer, np.floating)) for x in leaves):
            # Python ints past 64 bits (numpy keeps them as objects): PyTorch's overflow, unless a float
            # makes the result floating point
            if not any(isinstance(x, (float, np.floating)) for x in leaves):
                raise ValueError("Overflow when unpacking long long")
            return np.asarray(data, dtype=np.float64)
        raise _bad_scalar(data)
    if arr.dtype == np.uint64 and not isinstance(data, (np.ndarray, np.generic)):
        raise ValueError("Overflow when unpacking long long")
    if (arr.dtype.kind == "f" and isinstance(data, (list, tuple)) and arr.size and np.abs(arr).max() >= 2.0 ** 63
            and not _has_float(data)):
        # numpy turned ints past int64 into floats; without a float among them PyTorch infers int64 and overflows
        raise ValueError("Overflow when unpacking long long")
    return arr


def _has_float(data):
    """Whether nested lists hold a float (Python or numpy)."""
    return any(isinstance(x, (float, np.floating)) or isinstance(x, (list, tuple)) and _has_float(x) for x in data)


def _check_integers_fit(arr, d):
    """PyTorch's check when Python numbers become elements of an integer tensor: no silent wraparound
    (``tensor([300], dtype=int8)`` raises). Negative ints may wrap into uint8, as in PyTorch; floats are
    truncated and must fit, NaN and infinities never do."""
    info = np.iinfo(d.np)
    lo, hi = info.min, info.max
    if arr.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            bad = not (np.isfinite(arr).all() and arr.min() >= lo and arr.max() <= hi)
    elif arr.dtype.kind in "iu":
        if d is _dt.uint8:
            lo = -hi
        bad = int(arr.min()) < lo or int(arr.max()) > hi
    else:
        bad = False
    if bad:
        raise RuntimeError(f"value cannot be converted to type {d.name} without overflow")


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of ``data`` (nested lists, numbers, numpy arrays, tensors).

    Python numbers given for an integer ``dtype`` must fit it (PyTorch's RuntimeError otherwise);
    numpy arrays and tensors are cast, wrapping as a cast does."""
    if isinstance(data, Tensor):
        src = data.detach() if hasattr(data, "detach") else data
        out = src.to(device=_dev(device) if device is not None else src.device,
                     dtype=dtype or src.dtype, copy=True)
        return _finish(out, requires_grad)
    arr = _to_array(data)
    if isinstance(data, (list, tuple)) and len(data) == 0:
        arr = np.zeros(0)
        inferred = _dt.get_default_dtype()
    elif isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in data):
        inferred = _dt.from_numpy_dtype(arr.dtype)
    else:
        inferred = _infer_dtype(arr, data)
    d = dtype or inferred
    if inferred.category == _dt.COMPLEX and d.category != _dt.COMPLEX and not isinstance(data, (np.ndarray,
                                                                                              np.generic)):
        raise TypeError("must be real number, not complex")  # Python complex numbers into a real dtype
    if requires_grad and d.category < _dt.FLOATING:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    if d.category == _dt.INTEGRAL and not isinstance(data, (np.ndarray, np.generic)) and arr.size:
        _check_integers_fit(arr, d)
    with np.errstate(over="ignore", invalid="ignore"):  # 70000.0 as float16 is inf, silently as in PyTorch
        arr = np.array(arr, dtype=d.np, copy=True, order="C")
    return _finish(from_host(arr, d, device), requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Like :func:`tensor` but shares memory with ``data`` when dtype and device allow."""
    if isinstance(data, Tensor):
        if (dtype is None or dtype is data.dtype) and (device is None or _dev(device) == data.device):
            return data
        return data.to(device=_dev(device) if device is not None else data.device, dtype=dtype or data.dtype)
    if isinstance(data, np.ndarray) and (dtype is None or dtype.np == data.dtype) and _dev(device).type == "cpu":
        try:
            return from_numpy(data)
        except (TypeError, ValueError):
            pass
    return tensor(data, dtype=dtype, device=device)


def dlpack_import(ext):
    """``tensorplug.from_dlpack`` of an object in device memory: a tensor of the backend holding it, or
    None for host memory (the CPU path)."""
    get_dev = getattr(ext, "__dlpack_device__", None)
    if get_dev is None:
        return None
    typ, index = get_dev()
    typ = int(typ)
    if typ in (1, 3):  # kDLCPU, kDLCUDAHost: host memory
        return None
    holder = next((b for b in _backend.BACKENDS.values() if b.dlpack_device_type == typ), None)
    if holder is None and _backend.MANAGER.complete_pending():  # a plugin whose import was pending
        holder = next((b for b in _backend.BACKENDS.values() if b.dlpack_device_type == typ), None)
    if holder is not None:
        native = holder.from_dlpack(ext, int(index))
        dev = canonical_device(_device(holder.name, int(index)))
        return make_tensor(native, _dt.from_numpy_dtype(native.dtype), dev, holder.ks | Dense.bit)
    raise BufferError(f"from_dlpack: no enabled backend holds DLPack device type {typ} (a cuda array needs "
                      f"tensorplug-cuda)")


def from_numpy(ndarray):
    """A CPU tensor sharing memory with ``ndarray`` (no copy)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    d = _dt.from_numpy_dtype(ndarray.dtype)
    if any(s < 0 for s in ndarray.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors with negative "
                         "strides are not currently supported. (You can probably work around this by making "
                         "a copy of your array  with array.copy().) ")
    if ndarray.dtype.byteorder not in "=|":
        raise TypeError("given numpy array has byte order different from the native byte order. "
                        "Conversion between byte orders is currently not supported.")
    if any(s % ndarray.itemsize for s in ndarray.strides):
        raise ValueError("given numpy array strides not a multiple of the element byte size. "
                         "Copy the numpy array to reallocate the memory.")
    b = backend_for("cpu")
    return make_tensor(b.from_numpy(ndarray, _device("cpu")), d, _device("cpu"), b.ks)


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = int(s)
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
            raise TypeError(f"size must be a tuple of ints, but got {type(s).__name__}")
        out.append(int(s))
    return tuple(out)


def size_arg(name, args, size):
    """The shape a factory is given: ``*args`` (``zeros(2, 3)``, ``zeros((2, 3))``) or the ``size=`` keyword
    (``zeros(size=(2, 3))``), with PyTorch's errors when neither or both are given."""
    if size is None:
        if not args:
            raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
        return _size(args)
    if args:
        raise TypeError(f"{name}() got multiple values for argument 'size'")
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"{name}(): argument 'size' must be tuple of ints, not {type(size).__name__}")
    return _size((size,))


def empty(*args, size=None, dtype=None, device=None, requires_grad=False, memory_format=None, pin_memory=False):
    """An uninitialised tensor of shape ``size`` (``empty(2, 3)``, ``empty((2, 3))`` or ``empty(size=(2, 3))``).

    ``memory_format`` and ``pin_memory`` are accepted for PyTorch compatibility and ignored.
    """
    return _finish(_mem.empty(size_arg("empty", args, size), dtype=dtype or _dt.get_default_dtype(),
                              device=_dev(device)), requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    """A tensor of shape ``size`` filled with ``fill_value`` (dtype inferred from it if not given)."""
    return _finish(_mem.full(_size((size,)), fill_value, dtype=dtype, device=_dev(device)), requires_grad)


def zeros(*args, size=None, dtype=None, device=None, requires_grad=False):
    """A tensor of zeros (default float dtype) of shape ``size``, given as for :func:`empty`."""
    return _finish(_mem.full(size_arg("zeros", args, size), 0, dtype=dtype or _dt.get_default_dtype(),
                             device=_dev(device)), requires_grad)


def ones(*args, size=None, dtype=None, device=None, requires_grad=False):
    """A tensor of ones (default float dtype) of shape ``size``, given as for :func:`empty`."""
    return _finish(_mem.full(size_arg("ones", args, size), 1, dtype=dtype or _dt.get_default_dtype(),
                             device=_dev(device)), requires_grad)


def _like(t, dtype, device):
    return t.shape, dtype or t.dtype, _dev(device) if device is not None else t.device


def _like_of(input, out):
    """``out`` as the ``*_like`` result for ``input``: a transform's tensor subclass (vmap's batched
    tensors) turns the per-example result into one of its own kind, so writes into it stay per example."""
    hook = getattr(input.__class__, "_batched_like", None)
    return out if hook is None else hook(input, out)


def zeros_for(shape, like, *also):
    """Zeros of ``shape`` in ``like``'s dtype and device, for a backward formula to write ``like`` into
    (at positions that ``also``, index tensors say, may give).

    Under a transform whose tensors are a subclass (vmap's batched tensors) the
    zeros take the kind of the first of ``like, *also`` that has one, so the
    in-place write that follows stays per example instead of writing batched
    values into a shared tensor.
    """
    out = _mem.full(shape, 0, dtype=like._dtype, device=like._device)
    for t in (like, *also):
        if t is not None and t.__class__ is not Tensor:
            return _like_of(t, out)
    return out


def empty_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    """An uninitialised tensor with the shape (and by default dtype, device) of ``input``.

    ``memory_format`` is accepted for PyTorch compatibility and ignored: tensors are always row-major.
    """
    s, d, dev = _like(input, dtype, device)
    return _finish(_like_of(input, _mem.empty(s, dtype=d, device=dev)), requires_grad)


def zeros_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    """Zeros with the shape (and by default dtype, device) of ``input``.

    ``memory_format`` is accepted for PyTorch compatibility and ignored: tensors are always row-major.
    """
    s, d, dev = _like(input, dtype, device)
    return _finish(_like_of(input, _mem.full(s, 0, dtype=d, device=dev)), requires_grad)


def ones_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    """Ones with the shape (and by default dtype, device) of ``input``.

    ``memory_format`` is accepted for PyTorch compatibility and ignored: tensors are always row-major.
    """
    s, d, dev = _like(input, dtype, device)
    return _finish(_like_of(input, _mem.full(s, 1, dtype=d, device=dev)), requires_grad)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    """``fill_value`` everywhere, with the shape (and by default dtype, device) of ``input``.

    ``memory_format`` is accepted for PyTorch compatibility and ignored: tensors are always row-major.
    """
    s, d, dev = _like(input, dtype, device)
    return _finish(_like_of(input, _mem.full(s, fill_value, dtype=d, device=dev)), requires_grad)


def _num(x):
    return x.item() if isinstance(x, Tensor) else x


def _c_double(x):
    """``x`` as C++'s ``std::ostream`` prints a double (PyTorch's messages): 6 significant digits."""
    return "%g" % x


_INT64_MIN, _INT64_MAX = -2 ** 63, 2 ** 63 - 1


def arange(start=None, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 unless any bound is a float.

    The length and values are PyTorch's: for a floating dtype the length is ``ceil((end - start) / step)``
    in double and the values ``start + i * step``. An integer dtype truncates the bounds and step to
    integers first and steps by the truncated values; int64 also counts the length from them
    (``arange(3.1, dtype=int64)`` has 3 elements, ``arange(0, 3, 0.5, dtype=int64)`` is an error), the
    narrower integer types count it in double from the bounds as given. ``arange(end)`` and
    ``arange(end=end)`` start at 0.
    """
    start, end, step = _num(start), _num(end), _num(step)
    if end is None:
        if start is None:
            raise TypeError('arange() missing 1 required positional arguments: "end"')
        start, end = 0, start
    elif start is None:
        start = 0
    for v in (start, end, step):
        if isinstance(v, int) and not _INT64_MIN <= v <= _INT64_MAX:
            raise RuntimeError("value cannot be converted to type int64_t without overflow")
    if not (step > 0 or step < 0):  # also NaN
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {_c_double(start)} -> {_c_double(end)}")
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    floaty = any(isinstance(v, float) for v in (start, end, step))
    d = dtype or (_dt.get_default_dtype() if floaty else _dt.int64)
    if d is _dt.bool:
        raise NotImplementedError("\"arange\" not implemented for 'Bool'")
    if d.category == _dt.COMPLEX:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{_dt.scalar_type_name(d)}'")
    if d.is_floating_point:
        n = math.ceil((end - start) / step)
        if n > _INT64_MAX:
            raise RuntimeError("invalid size, possible overflow?")
        arr = start + np.arange(n, dtype=np.float64) * step
    else:
        xstart, xend, xstep = int(start), int(end), int(step)  # truncated toward zero, as C++ converts
        if d is _dt.int64:
            if xstep == 0:
                raise ValueError("step must be nonzero")
            sgn = 1 if xstep > 0 else -1
            num = xend - xstart + xstep - sgn
            n = abs(num) // abs(xstep) * (1 if (num >= 0) == (xstep > 0) else -1)  # C++'s truncating division
        else:
            n = math.ceil((float(end) - float(start)) / float(step))
        if n > _INT64_MAX:
            raise RuntimeError("invalid size, possible overflow?")
        n = max(n, 0)
        # int64 arithmetic, then the cast to the dtype wraps as PyTorch's does
        arr = (xstart + np.arange(n, dtype=np.int64) * xstep).astype(d.np)
    return _finish(from_host(np.ascontiguousarray(arr), d, device), requires_grad)


def _type_name(v):
    if isinstance(v, Tensor):
        return "Tensor"
    if isinstance(v, (_dt.dtype, _device)):
        return f"tensorplug.{type(v).__name__}"
    return type(v).__name__


def invalid_arguments(name, args, kwargs, signatures):
    """PyTorch's TypeError for arguments that match none of a function's signatures."""
    got = [_type_name(v) for v in args] + [f"{k}={_type_name(v)}" for k, v in kwargs.items()]
    return TypeError(f"{name}() received an invalid combination of arguments - got ({', '.join(got)}), but "
                     f"expected one of:\n" + "".join(f" * ({sig})\n" for sig in signatures))


_LINSPACE = ("Number start, Number end, int steps, *, tensorplug.dtype dtype = None, tensorplug.device device = None, "
             "bool requires_grad = False",)


def check_0d_ends(name, start, end):
    """linspace/logspace take numbers or 0-dim tensors as their ends, as PyTorch."""
    if (isinstance(start, Tensor) and start.dim()) or (isinstance(end, Tensor) and end.dim()):
        ds, de = (t.dim() if isinstance(t, Tensor) else 0 for t in (start, end))
        raise RuntimeError(f"{name} only supports 0-dimensional start and end tensors, but got start with {ds} "
                           f"dimension(s) and end with {de} dimension(s).")


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive; ``steps`` is an int (a float or
    bool is PyTorch's TypeError, not rounded)."""
    check_0d_ends("linspace", start, end)
    steps = _num(steps)
    if not isinstance(steps, numbers.Integral) or isinstance(steps, (bool, np.bool_)):
        kw = {k: v for k, v in (("dtype", dtype), ("device", device)) if v is not None}
        raise invalid_arguments("linspace", (start, end, steps), kw, _LINSPACE)
    steps = int(steps)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    start, end = _num(start), _num(end)
    d = dtype or (_dt.get_default_complex_dtype() if complex in (start.__class__, end.__class__)
                  else _dt.get_default_dtype())
    # PyTorch's formula: integer types step in double from truncated ends, float types compute in
    # their own precision, and the first half counts up from start, the second down from end
    if d.category >= _dt.FLOATING:
        work = d.np
        lo, hi = np.asarray(start, dtype=work), np.asarray(end, dtype=work)
    else:
        work = np.float64
        lo, hi = np.asarray(int(start), dtype=work), np.asarray(int(end), dtype=work)
    if steps == 1:
        arr = np.full(1, lo)
    else:
        step = (hi - lo) / np.asarray(steps - 1, dtype=work)
        i = np.arange(steps)
        arr = np.where(i < steps // 2, lo + step * i.astype(work), hi - step * (steps - 1 - i).astype(work))
    if d.category < _dt.FLOATING:
        arr = np.trunc(arr)
    return _finish(from_host(np.ascontiguousarray(arr), d, device), requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    """A 2-D tensor with ones on the diagonal."""
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m is not None and m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    d = dtype or _dt.get_default_dtype()
    return _finish(from_host(np.eye(n, m if m is not None else n, dtype=d.np), d, device), requires_grad)


def scalar_tensor_of(value, dtype=None, device=None):
    """A zero-dim tensor holding ``value`` (default float dtype unless ``dtype`` is given)."""
    d = dtype or _dt.get_default_dtype()
    return from_host(np.array(value, dtype=d.np), d, device)
