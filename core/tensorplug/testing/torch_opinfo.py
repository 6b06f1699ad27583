"""tensorplug against PyTorch's own OpInfo database (``torch.testing._internal``).

Every op of PyTorch's ``op_db`` whose name tensorplug also has is run on
PyTorch's own sample inputs: each sample (tensors, nested lists and tuples of
them, dtypes, sizes) is converted to tensorplug CPU tensors, the tensorplug op
is resolved by name (``op.name``, then ``op.aten_name``: a function of
``tensorplug``, ``tensorplug.nn.functional``, ``tensorplug.linalg``,
``tensorplug.special``, ``tensorplug.fft``, else a Tensor method), and four
checks compare it with PyTorch on the same sample:

* ``forward``: values (PyTorch's tolerances for the dtype), result dtypes and
  shapes; random ops (those whose PyTorch output changes with the seed) by
  shape and dtype only, randomized factorizations (``svd_lowrank``) by their
  gauge-invariant view;
* ``inplace``: the in-place variant (``x.op_(...)``) where both have one;
* ``grad``: float64 gradients of every input that requires grad, for the ops
  PyTorch marks ``supports_autograd`` (one fixed cotangent, the same for both),
  of the sample's ``output_process_fn_grad`` view of the result as in
  PyTorch's own gradient tests;
* ``error``: ``op.error_inputs``: the same exception type, its message
  matched by PyTorch's ``error_regex``.

An op tensorplug lacks is *missing* (counted in the coverage), not a failure.
The failures tensorplug accepts are listed, with a reason, in
:mod:`tensorplug.testing.torch_opinfo_exceptions`; ``tests/test_torch_opinfo.py``
fails on any other failure and on a listed one that passes now.

Samples are bounded per op and dtype and drawn with a seed derived from the
op's name, so a run is deterministic. Needs ``torch`` and ``expecttest``
(imported when a function here first needs them, never by ``import
tensorplug``). ``python -m tensorplug.testing.torch_opinfo --report`` prints
the coverage and, with ``--new-failures``, a ready-to-paste exceptions list.
"""

from __future__ import annotations

import importlib
import itertools
import re
import sys
import warnings
import zlib
from dataclasses import dataclass, field

import numpy as np

import tensorplug as tp

from .torch_opinfo_exceptions import EXCEPTIONS

CHECKS = ("forward", "inplace", "grad", "error")
MAX_SAMPLES = 3         # samples per op and dtype for the forward and in-place checks
MAX_GRAD_SAMPLES = 2    # float64 samples per op for the gradient check
MAX_ERROR_INPUTS = 6    # error inputs per op
FLOAT_DTYPES = ("float32", "float64")
INT_DTYPES = ("int64", "int32", "int16", "int8", "uint8")  # the first one the op supports is tested

# PyTorch's own tests call these with a fixed seed (or they read uninitialized memory): compared by shape
# and dtype only, like every op whose PyTorch result changes with the seed
RANDOM_OPS = {
    "bernoulli", "multinomial", "normal", "uniform", "exponential", "geometric", "cauchy", "log_normal",
    "rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "poisson",
    "nn.functional.dropout", "nn.functional.dropout1d", "nn.functional.dropout2d", "nn.functional.dropout3d",
    "nn.functional.alpha_dropout", "nn.functional.feature_alpha_dropout", "nn.functional.rrelu",
    "nn.functional.gumbel_softmax", "empty", "empty_like", "new_empty", "new_empty_strided",
    "empty_strided", "empty_permuted",
}

# randomized algorithms whose results are exact only up to a gauge the random draw picks (the signs of singular
# vectors): compared through the sample's gauge-invariant view of the output (``output_process_fn_grad``,
# (U @ V^H, S) for these), which PyTorch's own tests use for their gradients
GAUGE_RANDOM_OPS = {"svd_lowrank", "pca_lowrank"}


# OpInfo entries whose ``op`` is a lambda that reorders its arguments: tensorplug is called the same way
def _polygamma(x, n, **kw):
    return tp.polygamma(n, x, **kw)


ADAPTERS = {
    # PyTorch's OpInfo calls these through lambdas that take the tensor first
    **{f"polygamma.polygamma_n_{i}": _polygamma for i in range(5)},
    "special.polygamma.special_polygamma_n_0": lambda x, n, **kw: tp.special.polygamma(n, x, **kw),
    "where": lambda self, condition, other, **kw: tp.where(condition, self, other, **kw),
    "nn.functional.embedding": lambda weight, idx, **kw: _lookup_path("nn.functional.embedding")(idx, weight, **kw),
    "zero_": lambda x: x.clone().zero_(),
    "normal.in_place": lambda x, *args, **kw: x.normal_(*args, **kw),  # PyTorch's lambda calls Tensor.normal_
    "einsum": lambda tensors, equation: tp.einsum(equation, tensors),
    "linalg.pinv.singular": lambda a, b: tp.linalg.pinv(a @ b.mT),
    "linalg.lstsq.grad_oriented": lambda a, b, driver: tp.linalg.lstsq(a, b, driver=driver)[:2],
    # PyTorch's OpInfo calls these on the product of its two sample tensors (a low-rank matrix)
    "svd_lowrank": lambda a, b, **kw: tp.svd_lowrank(a @ b.mT, **kw),
    "pca_lowrank": lambda a, b, **kw: tp.pca_lowrank(a @ b.mT, **kw),
    # PyTorch's OpInfo calls the in-place random fills on its sample tensor
    **{n: (lambda m: lambda x, *a, **kw: getattr(x, m)(*a, **kw))(n + "_")
       for n in ("uniform", "exponential", "geometric", "cauchy", "log_normal")},
    # Tensor properties: PyTorch's OpInfo reads them through lambdas
    "T": lambda x: x.T, "H": lambda x: x.H, "mT": lambda x: x.mT, "mH": lambda x: x.mH,
    # PyTorch's OpInfo calls the operator torch.ops.aten.slice.Tensor: tensorplug's is tensorplug::slice.Tensor
    "slice": lambda x, *a, **kw: tp.ops.tensorplug.slice.Tensor(x, *a, **kw),
    # PyTorch has these in torch.ops.aten only (its OpInfo calls the aten op): tensorplug.ops.tensorplug's
    "native_dropout_backward": lambda *a, **kw: tp.ops.tensorplug.native_dropout_backward(*a, **kw),
    "max_pool2d_with_indices_backward": lambda *a, **kw: _max_pool2d_backward(*a, **kw),
    # PyTorch's OpInfo runs these under torch.manual_seed(42): the same window samples, drawn by torch's RNG
    "nn.functional.fractional_max_pool2d": lambda x, *a, **kw: _fractional_seeded(2, x, *a, **kw),
    "nn.functional.fractional_max_pool3d": lambda x, *a, **kw: _fractional_seeded(3, x, *a, **kw),
}


def _fractional_seeded(nd, input, *args, _random_samples=None, **kwargs):
    """fractional_max_pool{nd}d with the ``_random_samples`` PyTorch's seeded lambda draws (torch.rand after
    manual_seed(42)) when the sample gives none."""
    if _random_samples is None:
        torch = _torch()
        with torch.random.fork_rng():
            torch.manual_seed(42)
            n = 1 if input.dim() == nd + 1 else input.shape[0]
            _random_samples = to_tp(torch.rand(n, input.shape[-nd - 1], nd, dtype=getattr(torch, input.dtype.name)),
                                    False)
    fn = getattr(tp.nn.functional, f"fractional_max_pool{nd}d")
    return fn(input, *args, _random_samples=_random_samples, **kwargs)


def _max_pool2d_backward(input, kernel_size=(), stride=(), padding=(0,), dilation=(1,), ceil_mode=False, **kw):
    """PyTorch's OpInfo lambda: max_pool2d with indices, then its backward of a ones gradient."""
    out, indices = tp.nn.functional.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)
    stride = kernel_size if stride is None else stride
    return tp.ops.tensorplug.max_pool2d_with_indices_backward(tp.ones_like(out), input, kernel_size, stride, padding,
                                                              dilation, ceil_mode, indices)


class Unsupported(Exception):
    """A sample holds something with no tensorplug counterpart (a complex dtype, a generator): not run."""


def torch_op_db():
    """PyTorch's op database (imports torch and its internal testing modules, ~5 s)."""
    from torch.testing._internal.common_methods_invocations import op_db  # lazy: optional dependency, slow
    return op_db


def _torch():
    import torch  # lazy: optional dependency
    return torch


def key(op):
    """The database key of a PyTorch OpInfo: ``name`` or ``name.variant_test_name``."""
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


def user_facing(op):
    """PyTorch's user-facing ops: no internal ``_*``, jiterator, sparse, masked or ``*_copy`` names."""
    n = op.name
    if n.startswith("_") or "jiterator" in n or "sparse" in n or n.startswith("masked") or ".masked" in n:
        return False
    return not n.endswith("_copy")


def _lookup_path(path):
    """``tensorplug.<path>`` (dotted), importing a submodule namespace on the way, or None."""
    parts = path.split(".")
    obj = tp
    for i, part in enumerate(parts):
        try:
            obj = getattr(obj, part)
            continue
        except Exception:
            pass
        if i == len(parts) - 1:
            return None
        try:
            obj = importlib.import_module("tensorplug." + ".".join(parts[:i + 1]))
        except Exception:
            return None
    return obj if callable(obj) else None


def resolve(op):
    """``(kind, callable or method name)`` for tensorplug's counterpart of a PyTorch OpInfo, or None.

    kind is ``"function"`` (call it with the sample's input first) or ``"method"`` (a Tensor method).
    """
    if key(op) in ADAPTERS:
        return ("function", ADAPTERS[key(op)])
    names = [op.name]
    if op.aten_name and op.aten_name not in names:
        names.append(op.aten_name)
    for name in names:
        fn = _lookup_path(name)
        if fn is not None and not isinstance(fn, type):
            return ("function", fn)
    for name in names:
        if "." not in name and callable(getattr(tp.Tensor, name, None)):
            return ("method", name)
    return None


def user_facing_ops(op_db=None):
    return [op for op in (torch_op_db() if op_db is None else op_db) if user_facing(op)]


# --- conversion -------------------------------------------------------------------------------------------


def to_tp(v, requires_grad=None):
    """A PyTorch sample value as tensorplug's: tensors (their strides kept), dtypes, sizes, devices."""
    torch = _torch()
    if isinstance(v, torch.Tensor):
        if v.layout != torch.strided or v.is_quantized:
            raise Unsupported(f"{v.dtype} / {v.layout} tensor")
        if v.is_complex():
            v = v.resolve_conj()
        dt = _dtype(v.dtype)
        try:
            arr = (v.detach().float() if v.dtype in (torch.bfloat16, torch.float16) else v.detach()).numpy()
        except Exception as e:  # more dims than numpy has (an error input)
            raise Unsupported(str(e)) from None
        t = tp.from_numpy(np.array(arr, order="C", copy=True))
        if v.dim() and not v.is_contiguous():
            # keep the sample's layout: a transposed or sliced torch tensor stays non-contiguous here
            t = _with_strides(v, t)
        if t.dtype is not dt:
            t = t.to(dt)
        rg = v.requires_grad if requires_grad is None else requires_grad
        if rg and (dt.is_floating_point or dt.is_complex):
            t.requires_grad_(True)
        return t
    if isinstance(v, torch.dtype):
        return _dtype(v)
    if isinstance(v, torch.Size):
        return tuple(v)
    if isinstance(v, torch.device):
        return str(v)
    if isinstance(v, (torch.Generator, torch.memory_format, torch.layout)):
        raise Unsupported(type(v).__name__)
    if isinstance(v, list):
        return [to_tp(x, requires_grad) for x in v]
    if isinstance(v, tuple):
        return tuple(to_tp(x, requires_grad) for x in v)
    if isinstance(v, dict):
        return {k: to_tp(x, requires_grad) for k, x in v.items()}
    if callable(v) and not isinstance(v, type):
        raise Unsupported("callable argument")
    return v


def to_tp_aliased(v, memo=None):
    """As :func:`to_tp`, keeping which tensors share memory and how (the error inputs of out= test an out
    that is an input, overlaps one, or is expanded): each torch storage becomes one tensorplug buffer, and
    each tensor on it a strided view (offset and strides kept, stride 0 included)."""
    torch = _torch()
    memo = {} if memo is None else memo
    if isinstance(v, torch.Tensor):
        if id(v) in memo:
            return memo[id(v)]
        out = None
        if (v.layout == torch.strided and v.device.type == "cpu" and not v.is_quantized and not v.is_complex()
                and v.numel()
                and not v.requires_grad and v.dtype not in (torch.bfloat16, torch.float16)):
            st = v.untyped_storage()
            k = (st.data_ptr(), v.dtype)
            base = memo.get(k)
            if base is None:
                flat = torch.empty(0, dtype=v.dtype).set_(st)
                base = memo[k] = to_tp(flat, False)
            try:
                out = base.as_strided(tuple(v.shape), tuple(v.stride()), v.storage_offset())
            except Exception:  # a layout numpy cannot hold (more than 64 dims): converted alone below
                out = None
        if out is None:
            out = to_tp(v, False)
        memo[id(v)] = out
        return out
    if isinstance(v, list):
        return [to_tp_aliased(x, memo) for x in v]
    if isinstance(v, tuple):
        return tuple(to_tp_aliased(x, memo) for x in v)
    if isinstance(v, dict):
        return {k: to_tp_aliased(x, memo) for k, x in v.items()}
    return to_tp(v, False)


def _with_strides(src, dense):
    """``dense``'s values laid out with ``src``'s strides (through a larger buffer and as_strided)."""
    shape, strides = tuple(src.shape), tuple(src.stride())
    if any(s < 0 for s in strides):
        return dense
    # the smallest buffer holding every element at those strides
    extent = 1 + sum((n - 1) * s for n, s in zip(shape, strides) if n)
    if not all(shape) or extent > 8 * dense.numel() + 64:
        return dense
    buf = tp.zeros(extent, dtype=dense.dtype)
    view = buf.as_strided(shape, strides)
    if len(set(zip(shape, strides))) != len(shape) or _overlaps(shape, strides):
        return dense
    view.copy_(dense)
    return view


def _overlaps(shape, strides):
    dims = sorted((s, n) for n, s in zip(shape, strides) if n > 1)
    span = 1
    for s, n in dims:
        if s < span:
            return True
        span = s * n
    return False


def _dtype(d):
    name = str(d).split(".")[-1]
    out = getattr(tp, name, None)
    if not isinstance(out, tp.dtype):
        raise Unsupported(f"dtype {d}")
    return out


def to_torch(v):
    torch = _torch()
    if isinstance(v, tp.Tensor):
        if v.dtype.name in ("bfloat16", "float16"):
            return torch.from_numpy(v.detach().float().numpy().copy()).to(getattr(torch, v.dtype.name))
        return torch.from_numpy(np.array(v.detach().numpy(), copy=True))
    if isinstance(v, tp.dtype):
        return getattr(torch, v.name if hasattr(v, "name") else str(v).split(".")[-1])
    return v


def leaves(v):
    """The flat list of a result's values (tensors, numbers, bools), tuples and lists opened."""
    if isinstance(v, (list, tuple)):
        out = []
        for x in v:
            out.extend(leaves(x))
        return out
    return [v]


def _call(kind, fn, args, kwargs):
    if kind == "method":
        self, *rest = args
        return getattr(self, fn)(*rest, **kwargs)
    return fn(*args, **kwargs)


# --- running one op ---------------------------------------------------------------------------------------


@dataclass
class OpResult:
    key: str
    name: str
    samples: int = 0                       # samples run (all checks)
    failed_samples: int = 0
    unsupported: int = 0                   # samples not convertible (complex, generators)
    failures: dict = field(default_factory=dict)   # check -> first error text
    counts: dict = field(default_factory=dict)     # check -> failing samples

    def fail(self, check, text):
        self.failed_samples += 1
        self.counts[check] = self.counts.get(check, 0) + 1
        self.failures.setdefault(check, text[:300])


def _seed(name):
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


def _dtypes(op):
    torch = _torch()
    supported = op.supported_dtypes("cpu")
    out = [getattr(torch, n) for n in FLOAT_DTYPES if getattr(torch, n) in supported]
    for n in INT_DTYPES:
        if getattr(torch, n) in supported:
            out.append(getattr(torch, n))
            break
    if torch.bool in supported:
        out.append(torch.bool)
    return out


def _sample_args(sample):
    return (sample.input,) + tuple(sample.args), dict(sample.kwargs)


def _dropout_sample(op, sample):
    """Attention with dropout: random, though two seeds can draw the same result on PyTorch's tiny samples."""
    if op.name == "nn.functional.scaled_dot_product_attention":
        return sample.kwargs.get("dropout_p", 0.0) > 0
    if op.name == "nn.functional.multi_head_attention_forward":  # (query, key, value, ..., dropout_p, ...)
        return sample.kwargs.get("training", True) and len(sample.args) > 9 and sample.args[9] > 0
    return False


def _is_random(op, sample):
    """True when PyTorch's result on this sample changes with the seed (random ops, ``empty``)."""
    torch = _torch()
    if op.name in RANDOM_OPS or _dropout_sample(op, sample):
        return True
    args, kwargs = _sample_args(sample)
    outs = []
    for s in (1, 2):
        torch.manual_seed(s)
        with torch.no_grad():
            outs.append([x.clone() if isinstance(x, torch.Tensor) else x
                         for x in leaves(op(*_clone_args(args), **kwargs))])
    for a, b in zip(*outs):
        if isinstance(a, torch.Tensor) and not torch.equal(a, b):
            if not (a.is_floating_point() and torch.equal(a.nan_to_num(0.5), b.nan_to_num(0.5))):
                return True
    return False


def _clone_args(args):
    torch = _torch()
    return tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)


def _compare(expected, actual, random, reference=None):
    """The first difference between PyTorch's result and tensorplug's, or None.

    ``reference``, for a low-precision sample, returns PyTorch's result on the same inputs in
    float64 (or None): a tensor that is not close to PyTorch's still passes when it is as accurate
    (see :func:`_as_accurate`), as two summation orders of the same float32 products can differ by
    more than ``assert_close``'s tolerance where the sum cancels."""
    torch = _torch()
    exp, act = leaves(expected), leaves(actual)
    if len(exp) != len(act):
        return f"{len(act)} results, PyTorch gives {len(exp)}"
    for i, (e, a) in enumerate(zip(exp, act)):
        where = f"result {i}: " if len(exp) > 1 else ""
        if isinstance(e, torch.Tensor):
            if not isinstance(a, tp.Tensor):
                return f"{where}{type(a).__name__} where PyTorch gives a tensor"
            if str(a.dtype).split(".")[-1] != str(e.dtype).split(".")[-1]:
                return f"{where}dtype {a.dtype}, PyTorch gives {e.dtype}"
            if tuple(a.shape) != tuple(e.shape):
                return f"{where}shape {tuple(a.shape)}, PyTorch gives {tuple(e.shape)}"
            if random:
                continue
            try:
                torch.testing.assert_close(to_torch(a), e.detach(), equal_nan=True, check_device=False)
            except AssertionError as err:
                if not (reference is not None and _as_accurate(to_torch(a), e.detach(), reference, i)):
                    return where + " ".join(str(err).split("\n")[:3])
        elif isinstance(e, (bool, int, float)) and not isinstance(e, torch.Tensor):
            av = a.item() if isinstance(a, tp.Tensor) and a.numel() == 1 else a
            if isinstance(e, float) and isinstance(av, float):
                if not (av == e or (av != av and e != e) or abs(av - e) <= 1e-5 * max(1.0, abs(e))):
                    return f"{where}{av!r}, PyTorch gives {e!r}"
            elif av != e:
                return f"{where}{av!r}, PyTorch gives {e!r}"
    return None


def _as_accurate(actual, expected, reference, i):
    """Whether ``actual`` is as close to the float64 result as PyTorch's own ``expected`` is: its largest
    error no more than twice PyTorch's, plus ``assert_close``'s tolerance for the dtype."""
    torch = _torch()
    ref = reference()
    if ref is None or i >= len(ref) or not isinstance(ref[i], torch.Tensor) or ref[i].shape != expected.shape:
        return False
    if not expected.is_floating_point() or torch.isnan(expected).ne(torch.isnan(actual)).any():
        return False
    r, theirs, ours = ref[i].detach().double(), expected.double(), actual.double()
    finite = torch.isfinite(r)
    if not torch.equal(theirs[~finite], ours[~finite]):
        return False
    rtol, atol = {torch.float16: (1e-3, 1e-5), torch.bfloat16: (1.6e-2, 1e-5)}.get(expected.dtype, (1.3e-6, 1e-5))
    err_theirs = (theirs - r)[finite].abs()
    err_ours = (ours - r)[finite].abs()
    if err_ours.numel() == 0:
        return True
    return bool(err_ours.max() <= 2 * err_theirs.max() + atol + rtol * r[finite].abs().max())


def _float64_reference(op, args, kwargs):
    """A thunk for PyTorch's result with every floating tensor of the sample in float64 (None if it fails)."""
    torch = _torch()
    memo = []

    def up(x):
        if isinstance(x, torch.Tensor) and x.is_floating_point():
            return x.detach().double()
        if isinstance(x, (list, tuple)):
            return type(x)(up(v) for v in x)
        return x

    def reference():
        if not memo:
            try:
                torch.manual_seed(0)
                with torch.no_grad():
                    memo.append(leaves(op(*up(args), **{k: up(v) for k, v in kwargs.items()})))
            except Exception:
                memo.append(None)
        return memo[0]
    return reference


def _safe_compare(expected, actual, random, reference=None):
    try:
        return _compare(expected, actual, random, reference)
    except Exception as e:  # a result that cannot even be compared is a failure too
        return f"comparing the results raised {_err_text(e)}"


def _err_text(e):
    return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def _forward(op, res, kind, fn, dtypes, inplace_name):
    torch = _torch()
    for dt in dtypes:
        torch.manual_seed(_seed(key(op)))
        try:
            samples = list(itertools.islice(op.sample_inputs("cpu", dt, requires_grad=False), MAX_SAMPLES))
        except Exception:
            continue
        for sample in samples:
            args, kwargs = _sample_args(sample)
            try:
                targs, tkwargs = to_tp(args, False), to_tp(kwargs, False)
            except Unsupported:
                res.unsupported += 1
                continue
            try:
                torch.manual_seed(0)
                expected = op(*_clone_args(args), **kwargs)
            except Exception:
                continue  # PyTorch itself refuses the sample (a skip in its own tests)
            random = _is_random(op, sample)
            if op.name in GAUGE_RANDOM_OPS:  # compare what does not depend on the random draw
                expected = sample.output_process_fn_grad(expected)
            res.samples += 1
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    actual = _call(kind, fn, targs, tkwargs)
            except Exception as e:
                res.fail("forward", f"{dt}: {_err_text(e)}")
                continue
            if op.name in GAUGE_RANDOM_OPS:
                try:
                    actual = sample.output_process_fn_grad(actual)
                except Exception as e:
                    res.fail("forward", f"{dt}: {_err_text(e)}")
                    continue
            low = dt in (torch.float32, torch.float16, torch.bfloat16) and not random
            diff = _safe_compare(expected, actual, random, _float64_reference(op, args, kwargs) if low else None)
            if diff:
                res.fail("forward", f"{dt}: {diff}")
            if inplace_name is not None and not sample.broadcasts_input:
                _inplace(op, res, sample, dt, inplace_name, random)


def _inplace(op, res, sample, dt, name, random):
    args, kwargs = _sample_args(sample)
    try:
        self = args[0].clone()
        ret = op.inplace_variant(self, *args[1:], **kwargs)
    except Exception:
        return
    tself = to_tp(args[0].detach(), False).clone()
    targs, tkwargs = to_tp(args[1:], False), to_tp(kwargs, False)
    res.samples += 1
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tret = getattr(tself, name)(*targs, **tkwargs)
    except Exception as e:
        res.fail("inplace", f"{dt}: {_err_text(e)}")
        return
    if tret is not tself:
        res.fail("inplace", f"{dt}: {name} does not return self")
        return
    diff = _safe_compare(self, tself, random)
    if diff:
        res.fail("inplace", f"{dt}: {diff}")
    del ret


def _grad(op, res, kind, fn):
    torch = _torch()
    if not op.supports_autograd or torch.float64 not in op.supported_backward_dtypes("cpu"):
        return
    torch.manual_seed(_seed(key(op)))
    try:
        samples = list(itertools.islice(op.sample_inputs("cpu", torch.float64, requires_grad=True),
                                        MAX_GRAD_SAMPLES))
    except Exception:
        return
    for sample in samples:
        args, kwargs = _sample_args(sample)
        inputs = [t for t in leaves([args, list(kwargs.values())])
                  if isinstance(t, torch.Tensor) and t.requires_grad]
        if not inputs:
            continue
        try:
            torch.manual_seed(0)
            # PyTorch's own gradient tests differentiate the sample's view of the output (a gauge-invariant
            # function of eigenvectors or singular vectors, a part of a tuple): so does this check
            out = sample.output_process_fn_grad(op(*args, **kwargs))
            outs = [o for o in leaves(out) if isinstance(o, torch.Tensor) and o.requires_grad]
            if not outs:
                continue
            gen = torch.Generator().manual_seed(1)
            cots = [torch.randn(o.shape, dtype=o.dtype, generator=gen) for o in outs]
            expected = torch.autograd.grad(outs, inputs, cots, allow_unused=True)
        except Exception:
            continue
        try:
            # the same leaves, in the same order, as tensorplug tensors that require grad
            mapping = {}
            targs = _map_tensors(args, mapping)
            tkwargs = _map_tensors(kwargs, mapping)
        except Unsupported:
            res.unsupported += 1
            continue
        tinputs = [mapping[id(t)] for t in inputs]
        random = _is_random(op, sample)  # a gradient through a random draw: compared by shape and dtype
        res.samples += 1
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tout = sample.output_process_fn_grad(_call(kind, fn, targs, tkwargs))
            touts = [o for o in leaves(tout) if isinstance(o, tp.Tensor) and o.requires_grad]
            if len(touts) != len(outs):
                res.fail("grad", f"{len(touts)} differentiable results, PyTorch gives {len(outs)}")
                continue
            tcots = [to_tp(c, False) for c in cots]
            got = tp.autograd.grad(touts, tinputs, tcots, allow_unused=True)
        except Exception as e:
            res.fail("grad", _err_text(e))
            continue
        for i, (e, g) in enumerate(zip(expected, got)):
            e = torch.zeros_like(inputs[i]) if e is None else e
            g = tp.zeros(tuple(tinputs[i].shape), dtype=tinputs[i].dtype) if g is None else g
            diff = _safe_compare(e.detach(), g, random)
            if diff:
                res.fail("grad", f"input {i}: {diff}")
                break


def _map_tensors(v, mapping):
    torch = _torch()
    if isinstance(v, torch.Tensor):
        t = to_tp(v, False)
        if v.requires_grad:
            t = t.detach().requires_grad_(True)
        mapping[id(v)] = t
        return t
    if isinstance(v, (list, tuple)):
        out = [_map_tensors(x, mapping) for x in v]
        return out if isinstance(v, list) else tuple(out)
    if isinstance(v, dict):
        return {k: _map_tensors(x, mapping) for k, x in v.items()}
    return to_tp(v)


def _errors(op, res, kind, fn):
    torch = _torch()
    try:
        errs = list(itertools.islice(op.error_inputs("cpu"), MAX_ERROR_INPUTS))
    except Exception:
        return
    for ei in errs:
        args, kwargs = _sample_args(ei.sample_input)
        try:
            memo = {}
            targs, tkwargs = to_tp_aliased(args, memo), to_tp_aliased(kwargs, memo)
        except Unsupported:
            res.unsupported += 1
            continue
        try:
            torch.manual_seed(0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                op(*args, **kwargs)  # not cloned: an out= aliasing the input is what some of them test
        except Exception:
            pass
        else:
            continue  # PyTorch itself does not raise here (an expected failure in its own tests)
        res.samples += 1
        want = ei.error_type
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _call(kind, fn, targs, tkwargs)
        except Exception as e:
            if not isinstance(e, want):
                res.fail("error", f"{_err_text(e)}; PyTorch raises {want.__name__}: {ei.error_regex}")
            elif not re.search(ei.error_regex, str(e)):
                res.fail("error", f"message {str(e)[:150]!r} does not match {ei.error_regex!r}")
            continue
        res.fail("error", f"no error; PyTorch raises {want.__name__}: {ei.error_regex}")


def run_op(op):
    """Run every check of one PyTorch OpInfo against tensorplug: an :class:`OpResult`, or None when missing."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _run_op(op)


def _run_op(op):
    found = resolve(op)
    if found is None:
        return None
    kind, fn = found
    res = OpResult(key(op), op.name)
    inplace_name = None
    name = getattr(op.inplace_variant, "__name__", None)
    if name is not None:
        if callable(getattr(tp.Tensor, name, None)):
            inplace_name = name
    _forward(op, res, kind, fn, _dtypes(op), inplace_name)
    _grad(op, res, kind, fn)
    _errors(op, res, kind, fn)
    return res


# --- exceptions -------------------------------------------------------------------------------------------


def listed(k, check):
    """The reason the exceptions list gives for ``check`` of op ``k`` failing, or None."""
    return EXCEPTIONS.get(f"{k}/{check}") or EXCEPTIONS.get(k)


def judge(res):
    """``(unlisted failures, stale entries)`` of one op's result against the exceptions list."""
    new = {c: t for c, t in res.failures.items() if listed(res.key, c) is None}
    stale = []
    if res.key in EXCEPTIONS and not res.failures:
        stale.append(res.key)
    for c in CHECKS:
        if f"{res.key}/{c}" in EXCEPTIONS and c not in res.failures:
            stale.append(f"{res.key}/{c}")
    return new, stale


def paste_list(results):
    """The failures not in the list as lines of a dict to paste into the exceptions module."""
    lines = []
    for res in sorted(results, key=lambda r: r.key):
        new, _ = judge(res)
        for c, text in sorted(new.items()):
            lines.append(f"    {res.key + '/' + c!r}: {('TODO: ' + text)!r},")
    return "\n".join(lines)


# --- coverage ---------------------------------------------------------------------------------------------


@dataclass
class Coverage:
    names: list        # user-facing op names of PyTorch's op_db
    present: list      # of them, the ones tensorplug has
    results: list      # OpResult of every present OpInfo that was run

    def summary(self):
        n, p = len(self.names), len(self.present)
        run = sum(r.samples for r in self.results)
        failed = sum(r.failed_samples for r in self.results)
        ops_failing = sum(1 for r in self.results if r.failures)
        lines = [f"PyTorch op_db user-facing op names: {n}",
                 f"present in tensorplug: {p} ({100.0 * p / max(n, 1):.1f}%)",
                 f"OpInfo entries run: {len(self.results)}, with a failing check: {ops_failing}",
                 f"samples run: {run}, failing: {failed} ({100.0 * failed / max(run, 1):.1f}%)",
                 f"samples not convertible (complex, generators, ...): "
                 f"{sum(r.unsupported for r in self.results)}"]
        return "\n".join(lines)


def coverage(op_db=None, run=True, only=None):
    ops = user_facing_ops(op_db)
    names = sorted({op.name for op in ops})
    present = sorted({op.name for op in ops if resolve(op) is not None})
    results = []
    if run:
        for op in ops:
            if only is not None and key(op) not in only:
                continue
            r = run_op(op)
            if r is not None:
                results.append(r)
    return Coverage(names, present, results)


def main(argv=None):
    import argparse  # lazy: only the command line needs it
    p = argparse.ArgumentParser(prog="python -m tensorplug.testing.torch_opinfo",
                                description="tensorplug against PyTorch's OpInfo database")
    p.add_argument("--report", action="store_true", help="print the coverage and the failing ops")
    p.add_argument("--missing", action="store_true", help="list PyTorch's op names tensorplug lacks")
    p.add_argument("--new-failures", action="store_true",
                   help="print the failures not in the exceptions list, ready to paste")
    p.add_argument("ops", nargs="*", help="OpInfo keys to run (default: all)")
    a = p.parse_args(argv)
    cov = coverage(only=set(a.ops) or None)
    print(cov.summary())
    if a.missing:
        print("missing:", " ".join(sorted(set(cov.names) - set(cov.present))))
    if a.report:
        for r in sorted(cov.results, key=lambda r: r.key):
            if r.failures:
                state = ", ".join(f"{c} {r.counts[c]}" for c in CHECKS if c in r.failures)
                print(f"  {r.key:<40} failing: {state}")
    stale = [s for r in cov.results for s in judge(r)[1]]
    if stale:
        print("listed exceptions that pass now:", " ".join(stale))
    if a.new_failures:
        print("EXCEPTIONS additions:")
        print(paste_list(cov.results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
