"""The public plugin API: everything a backend or transform plugin may use.

A plugin imports from ``tensorplug`` (the user API), ``tensorplug.plugin_api``
(this module), ``tensorplug.library`` (operator and kernel registration) and
``tensorplug.testing`` (the conformance kit), and nothing else of the core: the
rest is internal and may change in any release. A test keeps the plugins in
this repository to that rule. docs/plugins.md and docs/backend-contract.md
describe the contract; :data:`API_VERSION` versions it.

Kernels read four fields of a tensor directly, because they are on every
call's hot path: ``t._data`` (the backend's native array, already viewed with
the tensor's shape and strides), ``t._shape`` (a tuple), ``t._dtype`` and
``t._device``. They are read-only for plugins: tensors are built with
:func:`tensor_maker`, :func:`wrap` and :func:`wrap_view`, never by writing
fields.

Transform protocol (vmap's ``BatchedTensor`` today): a transform's tensor
subclass of :class:`Tensor` made with :func:`new_wrapper` may override

- ``_check_values()``: host values the core's argument checks read (index
  bounds, probabilities); a wrapper standing for many examples returns all
  of them, batch dimensions first;
- ``_alias_without_history()``: a new wrapper over the same values with no
  autograd state; autograd saves outputs this way;
- ``_detach()``: what ``detach()`` returns;
- ``_batched_like(input, out)`` (a classmethod-style attribute on the class):
  the result of a ``*_like`` factory called on a wrapper, given the
  per-example result ``out``;

- ``_tensorplug_save_()``: ``(kind, parts, meta)`` for :func:`tensorplug.save` (plain tensors and
  JSON metadata; nothing is pickled), with :func:`register_tensor_kind` telling :func:`tensorplug.load`
  how to rebuild ``kind``;

and may install a draw target with :func:`set_draw_target_hook` so random
factories called without a wrapper argument (``randn`` inside ``vmap``) draw
into a tensor of its choice.
"""

from __future__ import annotations

from ._version import __version__ as CORE_VERSION, API_VERSION, check_api_version
from .autograd import graph as _graph
from .backend import Backend, backend_for, canonical_device
from .device import device
from .dispatch.dispatcher import (FALLTHROUGH as fallthrough_kernel, include_keys, exclude_keys, lookup_op, OpOverload,
                                  OPS as _OPS, tls_state as _tls_state, set_tls_state as _set_tls_state,
                                  _GENERATION)
from .dispatch.argcheck import bump_version as _bump
from .dispatch.keys import FunctionalityKey, REGISTRY as _REGISTRY
from .dispatch.library import Library
from .hookspecs import hookimpl
from .tensor import Tensor, make_tensor as _make_tensor, make_view as wrap_view, _wrap_dim, _is_contiguous, OBSERVER as _OBSERVER
from .dtypes import all_dtypes, BOOL, INTEGRAL, FLOATING, COMPLEX
from ._warn import warn_user
from .serialization import register_tensor_kind
from .plugins import LazyName as lazy_name
from .ops.promotion import binary_dtype, result_type, broadcast_shapes
from .ops.pointwise import float_dtype
from .ops.reductions import sum_dtype, any_dtype
from .ops.linalg import matmul_shape
from .ops.indexing import index_bounds_error, index_select_range_error, check_index_put_shapes
from .ops.joining import cat_plan
from .ops.views import (_infer_size, squeeze_dims, select_index, slice_bounds, view_strides,
                        _view_impl, _unsqueeze_impl)
from .ops import random as _random
from .ops.random import host_rng, random_bounds, initial_seed

__all__ = [
    "API_VERSION", "CORE_VERSION", "Backend", "Tensor", "device", "hookimpl", "Library", "FunctionalityKey",
    "fallthrough_kernel", "OpOverload", "include_keys", "exclude_keys", "lookup_op", "backend", "key_set", "normalize_device",
    "wrap", "wrap_view", "tensor_maker", "native", "new_wrapper", "autograd_bit", "key_bit", "functionality_key", "operators", "thread_keys", "set_thread_keys",
    "all_dtypes", "BOOL", "INTEGRAL", "FLOATING", "COMPLEX", "binary_dtype", "result_type", "float_dtype", "sum_dtype", "any_dtype", "broadcast_shapes", "matmul_shape",
    "wrap_dim", "is_contiguous", "index_bounds_error", "index_select_range_error", "check_index_put_shapes",
    "cat_plan", "infer_size", "squeeze_dims", "select_index", "slice_bounds", "view_strides", "view_impl",
    "unsqueeze_impl", "host_rng", "random_bounds", "initial_seed", "set_draw_target_hook", "add_node_scope",
    "remove_node_scope", "warn_user", "register_tensor_kind", "lazy_name",
    "written_arguments", "run_on_host", "check_api_version", "set_observer", "TensorSpec", "bump_version",
    "dispatch_generation",
]

_new = object.__new__


# -- backends and key sets -------------------------------------------------------------------
def backend(device_type):
    """The registered :class:`Backend` record serving ``device_type`` (a string or device).

    Raises the core's RuntimeError naming the plugin to install or enable when
    no enabled plugin serves it.
    """
    return backend_for(device_type)


def key_set(device_type):
    """The dispatch key set of fresh tensors on ``device_type`` (its backend bit with Dense).

    Read it when needed rather than caching it at hook time: the bits of a
    backend without a fixed ``slot`` may change when plugins are re-enabled.
    """
    return backend_for(device_type).ks


def normalize_device(dev):
    """The canonical :class:`device` for ``dev`` (a string, device or index): the index checked against the
    backend's ``device_count()`` (PyTorch's ``invalid device ordinal`` error) and filled in by the backend."""
    d = device(dev) if not isinstance(dev, int) else device("cpu", dev)
    return canonical_device(d)


def autograd_bit():
    """The Autograd functionality bit: a transform's wrapper clears it unless it itself requires grad."""
    return _REGISTRY.functionality["Autograd"].bit


def key_bit(name):
    """The bit of functionality key ``name`` (declared by some enabled plugin, or the core's)."""
    return _REGISTRY.functionality[name].bit


def functionality_key(name):
    """The :class:`FunctionalityKey` record named ``name`` (its ``bit``, ``priority``, ``per_backend``)."""
    return _REGISTRY.functionality[name]


def operators():
    """Every defined operator, as ``{qualified name: OpOverload}`` (a copy)."""
    return dict(_OPS)


def thread_keys():
    """``(include, exclude)``: this thread's key sets that every call ORs in and masks off."""
    return _tls_state()


def set_thread_keys(include, exclude):
    """Replace this thread's include and exclude key sets (ints, as :func:`thread_keys` gives them).

    For a transform whose switch is a state rather than a block (``set_autocast_enabled``):
    read both sets with :func:`thread_keys`, change only your key's bit, write both back. Blocks
    should use :func:`include_keys` / :func:`exclude_keys`, which restore the sets on exit.
    """
    _set_tls_state(int(include), int(exclude))


# -- building tensors --------------------------------------------------------------------------
def wrap(native, dtype, dev):
    """A fresh tensor of ``dtype`` on device ``dev`` around the backend's native array ``native``.

    ``native`` must have ``.shape``; nothing else shares its memory yet (use
    :func:`wrap_view` for views).
    """
    dev = device(dev)
    return _make_tensor(native, dtype, dev, backend_for(dev).ks)


def tensor_maker(record, dev=None, *, native_type=None, convert=None):
    """A fast ``make(native, dtype, dev=<default>)`` building fresh tensors of backend ``record``.

    The function a kernel calls on every result. ``record`` is the plugin's
    own :class:`Backend` instance (return the same instance from
    ``tensorplug_backends`` each time): ``make`` reads its current key set on
    every call, so it survives disable and enable. ``dev`` defaults to the
    backend's device without an index. With ``native_type`` and ``convert``,
    a ``native`` of another class is passed through ``convert`` first (numpy
    scalars to 0-d arrays) and ``native.shape`` is trusted to be a tuple.
    """
    default = device(record.name) if dev is None else device(dev)
    rec = record
    if native_type is None:
        def make(native, dtype, dev=default):
            t = _new(Tensor)
            t._data = native
            t._shape = tuple(native.shape)
            t._dtype = dtype
            t._device = dev
            t._ks = rec.ks
            return t
    else:
        def make(native, dtype, dev=default):
            if native.__class__ is not native_type:
                native = convert(native)
            t = _new(Tensor)
            t._data = native
            t._shape = native.shape
            t._dtype = dtype
            t._device = dev
            t._ks = rec.ks
            return t
    make.__doc__ = f"A fresh {record.name} tensor around ``native`` (tensorplug.plugin_api.tensor_maker)."
    return make


def native(t):
    """The backend's native array of ``t`` (what its kernels compute with)."""
    return t._data


def new_wrapper(cls, shape, dtype, dev, ks):
    """An instance of ``cls`` (a transform's subclass of :class:`Tensor`) showing the given metadata.

    The transform fills its own slots afterwards; the instance holds no native
    array (``cls`` decides what ``_data`` means for it).
    """
    t = _new(cls)
    t._shape = tuple(shape)
    t._dtype = dtype
    t._device = dev
    t._ks = ks
    return t


# -- checks and helpers with PyTorch's errors ---------------------------------------------------
def wrap_dim(dim, ndim):
    """``dim`` made non-negative for a tensor of ``ndim`` dims, with PyTorch's IndexError."""
    return _wrap_dim(dim, ndim)


def is_contiguous(shape, strides):
    """Whether ``strides`` (elements) lay out ``shape`` densely in row-major order (size-1 dims ignored)."""
    return _is_contiguous(shape, strides)


def infer_size(size, numel):
    """``size`` with its one ``-1`` resolved for ``numel`` elements, with PyTorch's errors."""
    return _infer_size(size, numel)


def view_impl(self, size):
    """The generic ``view`` (as_strided over ``self``'s storage), for backends without a native one."""
    return _view_impl(self, size)


def unsqueeze_impl(self, dim):
    """The generic ``unsqueeze`` (as_strided over ``self``'s storage)."""
    return _unsqueeze_impl(self, dim)


# -- random numbers -----------------------------------------------------------------------------
def set_draw_target_hook(hook):
    """Install ``hook(t) -> tensor`` for random factories, or remove it with None.

    A random factory (``randn``, ``rand_like`` of a plain tensor) passes the
    fresh plain tensor it is about to fill to ``hook`` and fills what it
    returns instead; one global read when no hook is installed.
    """
    _random.DRAW_TARGET_HOOK = hook


def add_node_scope(scope):
    """Make the autograd engine enter ``scope(node)`` (a context-manager factory) around each node's backward.

    Idempotent; with no scope installed the engine pays one list check per node.
    The profiler uses it to attribute the ops a backward formula runs to its node.
    """
    if scope not in _graph.NODE_SCOPES:
        _graph.NODE_SCOPES.append(scope)


def remove_node_scope(scope):
    """Undo :func:`add_node_scope` (nothing if ``scope`` is not installed)."""
    while scope in _graph.NODE_SCOPES:
        _graph.NODE_SCOPES.remove(scope)


class TensorSpec:
    """A tensor's ``shape``, ``dtype`` and ``device``, without its values: what a backend's
    ``compile_lowering.lower`` is told of each tensor argument and of the result."""

    __slots__ = ("shape", "dtype", "device")

    def __init__(self, shape, dtype, device):
        self.shape, self.dtype, self.device = tuple(shape), dtype, device

    def __eq__(self, other):
        return (other.__class__ is TensorSpec and self.shape == other.shape and self.dtype is other.dtype
                and self.device == other.device)

    def __hash__(self):
        return hash((self.shape, self.dtype))

    def __repr__(self):
        return f"TensorSpec({self.shape}, {self.dtype.name}, {self.device})"


def dispatch_generation():
    """A number that changes whenever a kernel, fallback, key or backend is registered or removed
    (a plugin enabled or disabled): code that cached resolved kernels (a compiled replay) compares it
    to know they still are what a call would run."""
    return _GENERATION[0]


def bump_version(t):
    """Count one in-place write to ``t`` (its version counter, shared with its views), as a kernel for an
    op that writes does: for code that writes a tensor's native array itself (a compiled replay)."""
    _bump(t)


# -- observing what a function does beyond op calls -------------------------------------------
def set_observer(observer):
    """Install ``observer`` (or remove it with None): the core tells it what a tracing transform cannot
    see as op calls.

    - ``observer.host_read(t, what)``: values of tensor ``t`` (or, with ``t`` None, a generator's
      state) are about to leave for Python; ``what`` says how (``"Tensor.item()"``,
      ``"printing a tensor"``, ``"a generator's get_state()"``);
    - ``observer.value_check(t)``: an op's argument check reads ``t``'s values (index bounds);
    - ``observer.grad_read(t)`` / ``observer.grad_write(t, value)``: ``t.grad`` is read or replaced
      (by user code, an optimizer, or the autograd engine accumulating into a leaf);
    - ``observer.effect(fn, *args)``: Python state that later kernel calls depend on is about to change
      by ``fn(*args)`` (a random generator reseeded); a replay should call it at the same point.

    One process-wide observer; it should act only for the threads it traces. With none installed
    each of these events costs one list read.
    """
    _OBSERVER[0] = observer


# -- schemas --------------------------------------------------------------------------------------
_WRITTEN: dict = {}


def written_arguments(op):
    """Positions of ``op``'s arguments its schema marks as written (``Tensor(a!)``), in order.

    A boxed fallback that runs an op on copies of its arguments copies back
    exactly these (and nothing else: a read-only argument may alias a written one).
    """
    w = _WRITTEN.get(op)
    if w is None:
        w = _WRITTEN[op] = tuple(i for i, a in enumerate(op.schema.arguments) if a.is_write)
    return w


def run_on_host(op, args, device_type, *, download, upload, copy_back, default_device):
    """Run ``op`` through the CPU's kernels on host copies of its arguments on ``device_type``: what a
    backend's boxed fallback (or a kernel for an op its device cannot do) calls.

    ``download(t)`` gives a host numpy array with the values of device tensor ``t``;
    ``upload(array, dtype, dev)`` a native array on device ``dev`` holding host ``array``;
    ``copy_back(t, host)`` writes the values of host tensor ``host`` into device tensor ``t`` (for
    the arguments the schema marks written, ``Tensor(a!)``); ``default_device()`` is the device
    results go to when no argument is on ``device_type``.

    Results come back to the arguments' device, and an argument written in place is returned as
    itself. Two devices of ``device_type`` among the arguments raise PyTorch's "Expected all
    tensors to be on the same device" error. A wrapped Python number keeps its flag on the host, so
    type promotion is the same as on the device.
    """
    cpu = device("cpu")
    found = None
    for a in args:
        for x in (a if isinstance(a, (list, tuple)) else (a,)):
            dev = x._device if isinstance(x, Tensor) else (x if isinstance(x, device) else None)
            if dev is None or dev.type != device_type or (isinstance(x, Tensor) and x._wrapped_number):
                continue
            if found is None:
                found = dev
            elif dev is not found:
                raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                                   f"{found} and {dev}! (when checking arguments for {op.qualname})")
    target = found if found is not None else default_device()
    copies = {}  # id(host copy) -> (host copy, device original)

    def to_host(x):
        if isinstance(x, Tensor):
            if x._device.type != device_type:
                return x
            host = wrap(download(x), x._dtype, cpu)
            host._wrapped_number = x._wrapped_number
            copies[id(host)] = (host, x)
            return host
        if isinstance(x, (list, tuple)):
            return type(x)(to_host(v) for v in x)
        if isinstance(x, device) and x.type == device_type:
            return cpu
        return x

    def to_device(x):
        if isinstance(x, Tensor):
            if id(x) in copies:  # an argument written in place: the device original is the result
                return copies[id(x)][1]
            return wrap(upload(x._data, x._dtype, target), x._dtype, target)
        if isinstance(x, (list, tuple)):
            return type(x)(to_device(v) for v in x)
        return x

    host_args = [to_host(a) for a in args]
    out = op.redispatch(key_set("cpu"), *host_args)
    for i in written_arguments(op):
        for host in (host_args[i] if isinstance(host_args[i], (list, tuple)) else (host_args[i],)):
            if isinstance(host, Tensor) and id(host) in copies:
                copy_back(copies[id(host)][1], host)
    return to_device(out)
