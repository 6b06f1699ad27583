"""The Tensor: metadata over a backend's native strided array.

A tensor holds five hot fields in slots: ``_data`` (the backend's native
array, already viewed with the tensor's shape and strides), ``_shape``,
``_dtype``, ``_device`` and ``_ks`` (its dispatch key set). Everything else
(storage and version counter, autograd state, view base) lives in the
instance dict with class-level defaults, so creating a result tensor costs
five slot stores.

The :class:`Storage` (root buffer plus the version counter shared by all
views) is created lazily the first time a view is taken or an in-place op
bumps the version, so ordinary results never pay for it; its root buffer is
looked up only when asked for.
"""

from __future__ import annotations

from . import _state
from . import dtypes as _dt
from ._printing import tensor_repr
from .backend import backend_for, backend_of, canonical_device
from .dispatch.keys import Autograd as _Autograd
from .device import device as _device


class Storage:
    """The memory a tensor and its views share, with their version counter.

    ``mem`` is None, or a token shared with the storages that address the same
    memory under another version counter (what ``.data`` gives), so the
    overlap checks of in-place ops still see them as one memory.
    """

    __slots__ = ("_root", "_native", "device", "version", "mem", "__weakref__")

    def __init__(self, root, device):
        self._root = root
        self._native = None
        self.device = device
        self.version = 0
        self.mem = None

    def with_new_version_counter(self):
        """A storage for the same memory whose version counter starts at 0 (``.data``'s)."""
        token = self.mem
        if token is None:
            token = self.mem = object()
        st = _new(Storage)
        st._root, st._native, st.device, st.version, st.mem = self._root, self._native, self.device, 0, token
        return st

    @property
    def root(self):
        """The backend's buffer: found from the first tensor's native array when first asked for, since
        most storages only ever serve as a version counter (a view's, a saved output's)."""
        r = self._root
        if r is None:
            r = self._root = backend_of(self.device.type).storage(self._native)[0]
            self._native = None
        return r

    def nbytes(self):
        return backend_of(self.device.type).storage_nbytes(self.root)


_new = object.__new__
LEGACY_NEW = [None]  # the legacy constructor behind Tensor(...), installed by tensorplug._legacy
OBSERVER = [None]
"""``OBSERVER[0]``: an object told when values leave a tensor for Python and when ``.grad`` is read or
written (a tracing transform: see :func:`tensorplug.plugin_api.set_observer`); None, one list read, otherwise."""


class Tensor:
    """A multi-dimensional array on a device, with PyTorch's API.

    Create tensors with factories (``tensorplug.tensor``, ``zeros``,
    ``arange``...). Calling the class is PyTorch's legacy constructor:
    ``Tensor([1, 2])`` copies data into the default dtype, ``Tensor(2, 3)``
    is uninitialised and ``Tensor()`` empty.
    """

    # _grad_acc: a leaf's weak reference to its AccumulateGrad (autograd.graph.leaf_edge), unset until
    # the leaf first reaches a graph; a slot, not an instance-dict entry, since an op on leaves whose
    # last graph is gone (x + y in a loop) reads and replaces it on every call
    __slots__ = ("_data", "_shape", "_dtype", "_device", "_ks", "_grad_acc", "__dict__", "__weakref__")

    # rarely-set state: class defaults, instance dict when set
    _storage = None
    _storage_offset0 = None
    _no_internal_overlap = False  # set once a write found no two elements sharing memory (dispatch.argcheck)
    _base = None
    _requires_grad = False
    _grad = None
    _grad_fn = None
    _retains_grad = False
    _wrapped_number = False
    _backward_hooks = None
    _output_nr = 0

    def __new__(cls, *args, **kwargs):
        # PyTorch's legacy constructor: Tensor([1, 2]), Tensor(2, 3), Tensor() (tensorplug._legacy)
        if cls is Tensor and LEGACY_NEW[0] is not None:
            return LEGACY_NEW[0](None, args, kwargs, "Tensor")
        return _new(cls)

    def __init__(self, *args, **kwargs):
        if type(self) is not Tensor:  # a subclass without its own __init__
            raise TypeError("use tensorplug.tensor(...), tensorplug.empty(...) or another factory to create tensors")

    # -- metadata -------------------------------------------------------------
    @property
    def shape(self):
        return self._shape

    def size(self, dim=None):
        """The shape (a tuple), or the size of dimension ``dim``."""
        if dim is None:
            return self._shape
        return self._shape[_wrap_dim(dim, len(self._shape))]

    def dim(self):
        """Number of dimensions."""
        return len(self._shape)

    ndimension = dim

    @property
    def ndim(self):
        return len(self._shape)

    def numel(self):
        """Number of elements."""
        n = 1
        for s in self._shape:
            n *= s
        return n

    nelement = numel

    @property
    def dtype(self):
        return self._dtype

    @property
    def device(self):
        return self._device

    @property
    def is_cpu(self):
        return self._device.type == "cpu"

    @property
    def is_cuda(self):
        return self._device.type == "cuda"

    def element_size(self):
        """Bytes per element."""
        return self._dtype.itemsize

    def is_floating_point(self):
        """Whether the dtype is a floating point type."""
        return self._dtype.is_floating_point

    def is_complex(self):
        """Whether the dtype is a complex type (complex64 or complex128)."""
        return self._dtype.category == _dt.COMPLEX

    def stride(self, dim=None):
        """Strides in elements (a tuple), or the stride of dimension ``dim``."""
        st = backend_of(self._device.type).strides(self._data)
        if dim is None:
            return st
        return st[_wrap_dim(dim, len(self._shape))]

    def storage_offset(self):
        """Offset of the first element in the storage, in elements."""
        o = self._storage_offset0  # views made by as_strided know it already
        if o is None:
            o = self._storage_offset0 = backend_of(self._device.type).storage(self._data)[1]
        return o

    def is_contiguous(self, memory_format=None):
        """Whether the elements are laid out densely in row-major order (size-1 dims ignored)."""
        return _is_contiguous(self._shape, self.stride())

    def untyped_storage(self):
        """The :class:`Storage` shared with every view of this tensor."""
        return self._get_storage()

    def data_ptr(self):
        """An integer identifying the address of the first element (equal for aliasing views)."""
        b = backend_of(self._device.type)
        root, off = b.storage(self._data)
        return id(root) + off * self._dtype.itemsize

    def _get_storage(self):
        st = self._storage
        if st is None:
            st = _new(Storage)
            st._root = None
            st._native = self._data
            st.device = self._device
            st.version = 0
            st.mem = None
            self._storage = st
        return st

    @property
    def _version(self):
        st = self._storage
        return 0 if st is None else st.version

    @property
    def is_leaf(self):
        return self._grad_fn is None

    @property
    def requires_grad(self):
        return self._requires_grad

    @property
    def grad_fn(self):
        return self._grad_fn

    @property
    def grad(self):
        obs = OBSERVER[0]
        if obs is not None:
            obs.grad_read(self)
        return self._grad

    @grad.setter
    def grad(self, value):
        obs = OBSERVER[0]
        if obs is not None:
            obs.grad_write(self, value)
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got {type(value).__name__}")
            if value._shape != self._shape:
                raise RuntimeError(f"attempting to assign a gradient of size '{list(value._shape)}' to a tensor of "
                                   f"size '{list(self._shape)}'. Please ensure that the gradient and the tensor are "
                                   f"the same size")
            if value._dtype is not self._dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{_dt.c_type_name(value._dtype)}' to a tensor with "
                    f"grad_dtype '{_dt.scalar_type_name(self._dtype)}'. The gradient must match the tensor's "
                    "grad_dtype (defaults to the tensor's dtype). You can set the tensor's grad_dtype attribute "
                    "with a specific dtype, or None to allow any dtype. Set grad_dtype with caution. Diverging the "
                    "dtypes of a tensor and its gradient may break downstream systems that assume they match.")
            if value._device.type != self._device.type:
                raise RuntimeError(f"attempting to assign a gradient with device type '{value._device.type}' to a "
                                   f"tensor with device type '{self._device.type}'. Please ensure that the "
                                   f"gradient and the tensor are on the same device")
        self._grad = value

    @property
    def is_view(self):
        return self._base is not None

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __hash__(self):
        return id(self)

    def __bool__(self):
        n = self.numel()
        if n != 1:
            raise RuntimeError(f"Boolean value of Tensor with {'no values' if n == 0 else 'more than one value'} "
                               "is ambiguous")
        return bool(self.item())

    def __index__(self):
        if self._dtype.category >= _dt.FLOATING or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __int__(self):
        return int(self._real_scalar("int64_t"))

    def __float__(self):
        return float(self._real_scalar("double"))

    def _real_scalar(self, ctype):
        v = self._scalar()
        if v.__class__ is complex:
            raise RuntimeError(f"value cannot be converted to type {ctype} without overflow")
        return v

    def __complex__(self):
        return complex(self._scalar())

    def _scalar(self):
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self.item()

    # -- host exchange ---------------------------------------------------------
    def numpy(self, *, force=False):
        """The values as a numpy array; zero-copy (sharing memory) on CPU."""
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                               "Use tensor.detach().numpy() instead.")
        if self._device.type != "cpu" and not force:
            raise TypeError(f"can't convert {self._device} device type tensor to numpy. "
                            "Use Tensor.cpu() to copy the tensor to host memory first.")
        obs = OBSERVER[0]
        if obs is not None:
            obs.host_read(self, "Tensor.numpy()")
        return backend_of(self._device.type).to_numpy(self._data)

    def _host(self, what="reading the values on the host"):
        """Values as a numpy array, from any device (copying if needed); ``what`` names the reader
        for an observer (``Tensor.item()``, ``printing a tensor``)."""
        obs = OBSERVER[0]
        if obs is not None:
            obs.host_read(self, what)
        return backend_of(self._device.type).to_numpy(self._data)

    def _check_values(self):
        """Host values for argument checks only (bounds, signs), never for results.

        A transform's wrapper returns every element it stands for (a vmap batched
        tensor: all examples, batch dimensions first), so a check sees each example.
        """
        obs = OBSERVER[0]
        if obs is not None:
            obs.value_check(self)
        return backend_of(self._device.type).to_numpy(self._data)

    def tolist(self):
        """The values as (nested) Python lists of Python numbers."""
        return self._host("Tensor.tolist()").tolist()

    def item(self):
        """The value of a one-element tensor as a Python number."""
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        return self._host("Tensor.item()").reshape(()).item()

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        if dtype is not None and a.dtype != dtype:
            return a.astype(dtype)
        return a.copy() if copy else a

    def __repr__(self):
        return tensor_repr(self)

    def __format__(self, spec):
        try:
            shape = self._shape
        except AttributeError:  # half-constructed: say so, as repr does
            return repr(self)
        if not shape:
            return format(self.item(), spec)
        if spec:
            raise TypeError("unsupported format string passed to Tensor.__format__")
        return repr(self)

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._shape[0]))

    def __reduce_ex__(self, protocol):
        return (_rebuild, (self._host().copy(), self._dtype.name, str(self._device), self._requires_grad))

    def __dlpack__(self, stream=None, **kwargs):
        """Export as a DLPack capsule (consumers share the memory): CPU tensors, and tensors of a backend
        with a ``dlpack_device_type`` (cuda through cupy)."""
        if self._requires_grad:
            raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
        if self._device.type != "cpu" and backend_of(self._device.type).dlpack_device_type is None:
            raise BufferError(f"__dlpack__ is not supported for {self._device.type} tensors")
        # max_version / dl_device / copy must reach numpy, or it exports a legacy, read-only capsule
        return self._data.__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self):
        if self._device.type == "cpu":
            return (1, 0)
        return self._data.__dlpack_device__()

    @property
    def __cuda_array_interface__(self):
        """CUDA Array Interface (version 3) of a cuda tensor's memory, for zero-copy exchange."""
        if self._device.type != "cuda":
            raise AttributeError(f"Can't get __cuda_array_interface__ on non-CUDA tensor type: {self.type()}")
        if self._requires_grad:
            raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires grad. "
                               "If gradients aren't required, use var.detach() to get Variable that doesn't "
                               "require grad.")
        try:
            return self._data.__cuda_array_interface__
        except AttributeError:
            raise AttributeError("__cuda_array_interface__: this cuda tensor's memory is not CUDA memory "
                                 "(the simulated mode keeps it on the host)") from None


def from_host(arr, dtype, device):
    """A tensor on ``device`` with the values of numpy ``arr`` cast to ``dtype``.

    The array is shared (not copied) when the backend can (cpu) and no cast is needed.
    """
    dev = device
    if not isinstance(dev, _device):
        if dev is None:
            dev = _state.default_device
        elif isinstance(dev, int) and not isinstance(dev, bool):
            dev = _device("cpu", dev)
        else:
            dev = _device(dev)
    b = backend_for(dev)
    dev = canonical_device(dev)
    if arr.dtype != dtype.np:
        arr = arr.astype(dtype.np)
    return make_tensor(b.from_numpy(arr, dev), dtype, dev, b.ks)



def _rebuild(arr, dtype_name, dev, requires_grad):
    t = from_host(arr, _dt._by_name(dtype_name), _device(dev))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _wrap_dim(dim, ndim):
    """Normalize a possibly negative dim, with PyTorch's IndexError."""
    n = ndim if ndim > 0 else 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def _is_contiguous(shape, strides):
    if 0 in shape:
        return True
    expected = 1
    for size, st in zip(reversed(shape), reversed(strides)):
        if size == 1:
            continue
        if st != expected:
            return False
        expected *= size
    return True


def make_tensor(native, dtype, device, ks):
    """Wrap a backend's native array as a fresh tensor (no storage shared yet)."""
    t = _new(Tensor)
    t._data = native
    t._shape = tuple(native.shape)
    t._dtype = dtype
    t._device = device
    t._ks = ks
    return t


def make_view(src, native, dtype=None, storage_offset=None):
    """Wrap ``native``, a view of ``src``'s memory, sharing its storage and version counter.

    ``storage_offset`` (elements), when the caller knows it, saves the backend a
    lookup in ``storage_offset()``.
    """
    t = _new(Tensor)
    t._data = native
    t._shape = tuple(native.shape)
    t._dtype = src._dtype if dtype is None else dtype
    t._device = src._device
    t._ks = src._ks & ~_AUTOGRAD_BIT[0]
    t._storage = src._get_storage()
    t._base = src if src._base is None else src._base
    if storage_offset is not None:
        t._storage_offset0 = storage_offset
    return t


_AUTOGRAD_BIT = [_Autograd.bit]

__all__ = ["Tensor", "Storage", "make_tensor", "make_view", "backend_for"]
