"""Calls that used to compute a wrong result (or fail) where PyTorch raises (or computes), against PyTorch:
the same values and dtypes, or the same exception type and message."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp

torch = pytest.importorskip("torch")


def both(fn):
    """``fn(lib)`` with tensorplug and with torch: each a (result, exception) pair."""
    out = []
    for lib in (tp, torch):
        try:
            out.append((fn(lib), None))
        except Exception as e:  # noqa: BLE001 - the exception is what is compared
            out.append((None, e))
    return out


def _value(x):
    if isinstance(x, (tp.Tensor, torch.Tensor)):
        return (str(x.dtype).split(".")[-1], tuple(x.shape), np.asarray(x.detach().tolist()).tolist())
    if isinstance(x, (tuple, list)):
        return tuple(_value(v) for v in x)
    return x


def assert_same(fn, message="all"):
    """Same value, or the same exception: with its whole message (``"all"``), its first line (``"first"``)
    or only its type (``None``)."""
    (mine, my_err), (theirs, their_err) = both(fn)
    if my_err is not None or their_err is not None:
        assert my_err is not None and their_err is not None, f"tensorplug: {my_err!r}; torch: {their_err!r}"
        assert type(my_err).__name__ == type(their_err).__name__, (my_err, their_err)
        want = str(their_err).replace("torch.", "tensorplug.")
        if message == "all":
            assert str(my_err) == want
        elif message == "first":
            assert str(my_err).splitlines()[0] == want.splitlines()[0]
        return
    assert _close(_value(mine), _value(theirs)), (mine, theirs)


def _close(a, b):
    """Values from :func:`_value` equal up to float rounding (NaN equal to NaN)."""
    if isinstance(a, tuple) and len(a) == 3 and isinstance(a[0], str):
        return (isinstance(b, tuple) and a[:2] == b[:2]
                and np.allclose(np.asarray(a[2], float), np.asarray(b[2], float), rtol=1e-6, equal_nan=True))
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    return a == b


# -- factories ---------------------------------------------------------------------------------------------
ARANGE = [((3.1,), "int64"), ((3.9,), "int64"), ((-3.9,), "int64"), ((0, -3.5, -1), "int64"), ((0, 5, 1.5), "int64"),
          ((2.9, 0.1, -1), "int64"), ((0, 0.5), "int64"), ((-2.5, 3.7, 1.5), "int64"), ((0, 3, 0.5), "int64"),
          ((3, 0, -1.5), "int64"), ((0.5, 3.7, 0.9), "int32"), ((0, 5, 1.5), "int16"), ((-2.5, 3.7, 1.5), "uint8"),
          ((0, 3, 0.5), "int8"), ((1e10, 1e10 + 3.5, 1), "int32"), ((0.5, 0.2, 1), "int64"), ((0, 1, 0.1), "float32"),
          ((1.5, 2.5, 0.25), "float16"), ((0, float("inf")), None), ((float("-inf"), 0), None), ((0.0, float("nan")), None),
          ((0, 3, float("nan")), None), ((2 ** 63,), None), ((0.0, 1e300), None), ((0, 3, 0.0), None)]


@pytest.mark.parametrize("args,dtype", ARANGE, ids=[f"{a}-{d}" for a, d in ARANGE])
def test_arange_length_and_values(args, dtype):
    assert_same(lambda m: m.arange(*args, **({"dtype": getattr(m, dtype)} if dtype else {})))


def test_arange_bool_is_not_implemented():
    (_, mine), (_, theirs) = both(lambda m: m.arange(3, dtype=m.bool))
    assert type(mine) is type(theirs) is NotImplementedError


@pytest.mark.parametrize("steps", [2.5, True, 2.0])
def test_linspace_steps_must_be_an_int(steps):
    assert_same(lambda m: m.linspace(0, 1, steps), message="first")
    assert_same(lambda m: m.linspace(0.0, 1, steps, dtype=m.float64), message="first")


@pytest.mark.parametrize("steps", [3, np.int64(3)])
def test_linspace_accepts_integer_steps(steps):
    assert_same(lambda m: m.linspace(0, 1, steps))


TENSOR_DATA = [([300], "int8"), ([-129], "int8"), ([-1], "int8"), (300, "uint8"), ([-1], "uint8"), ([-129], "uint8"),
               ([256], "uint8"), ([[1, 300]], "int8"), ([True, 300], "uint8"), ([2 ** 31], "int32"),
               ([70000.0], "int16"), ([70000.0], "int32"), ([float("inf")], "int64"), ([float("nan")], "int32"),
               ([1e40], "int64"), ([-0.5], "uint8"), ([255.5], "uint8"), ([1.7, -1.7], "int8"), ([300], "int16"),
               ([70000.0], "float16"), ([300], "bool")]


@pytest.mark.parametrize("data,dtype", TENSOR_DATA, ids=[f"{a}-{d}" for a, d in TENSOR_DATA])
def test_python_numbers_must_fit_an_integer_dtype(data, dtype):
    assert_same(lambda m: m.tensor(data, dtype=getattr(m, dtype)))


def test_numpy_data_is_cast_without_a_check_as_in_torch():
    assert_same(lambda m: m.tensor(np.array([300, -1]), dtype=m.int8))


# -- activations at special values -------------------------------------------------------------------------
SPECIAL = [float("inf"), -float("inf"), float("nan"), 0.0, 30.0, -30.0]


def _value_and_grad(fn, dtype="float64"):
    def run(m):
        x = m.tensor(SPECIAL, dtype=getattr(m, dtype), requires_grad=True)
        y = fn(m, x)
        (g,) = m.autograd.grad(y.sum(), x)
        return y, g
    return run


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["logsigmoid", "softplus", "softplus_beta", "elu", "elu_alpha"])
def test_activations_at_infinities_and_nan(name, dtype):
    fns = {"logsigmoid": lambda m, x: m.nn.functional.logsigmoid(x),
           "softplus": lambda m, x: m.nn.functional.softplus(x),
           "softplus_beta": lambda m, x: m.nn.functional.softplus(x, beta=2.0, threshold=5.0),
           "elu": lambda m, x: m.nn.functional.elu(x), "elu_alpha": lambda m, x: m.nn.functional.elu(x, alpha=0.5)}
    assert_same(_value_and_grad(fns[name], dtype))


# -- losses --------------------------------------------------------------------------------------------------
def _t(m, values, dtype="float32"):
    return m.tensor(values, dtype=getattr(m, dtype))


LOSS_CALLS = {
    "bce target above 1": lambda m: m.nn.functional.binary_cross_entropy(_t(m, [0.5]), _t(m, [2.0])),
    "bce target below 0": lambda m: m.nn.functional.binary_cross_entropy(_t(m, [0.5]), _t(m, [-0.5])),
    "bce target nan": lambda m: m.nn.functional.binary_cross_entropy(_t(m, [0.5]), _t(m, [float("nan")])),
    "bce input nan": lambda m: m.nn.functional.binary_cross_entropy(_t(m, [float("nan")]), _t(m, [0.5])),
    "bce input above 1": lambda m: m.nn.functional.binary_cross_entropy(_t(m, [1.5]), _t(m, [0.5])),
    "bce first culprit": lambda m: m.nn.functional.binary_cross_entropy(_t(m, [0.5, 1.5]), _t(m, [2.0, 0.5])),
    "bce float64": lambda m: m.nn.functional.binary_cross_entropy(_t(m, [0.5], "float64"), _t(m, [2.0], "float64")),
    "bce target dtype": lambda m: m.nn.functional.binary_cross_entropy(_t(m, [0.5]), _t(m, [1.0], "float64")),
    "bce int target": lambda m: m.nn.functional.binary_cross_entropy(_t(m, [0.5]), _t(m, [1], "int64")),
    "bce int": lambda m: m.nn.functional.binary_cross_entropy(_t(m, [1], "int64"), _t(m, [1], "int64")),
    "bce weight dtype": lambda m: m.nn.functional.binary_cross_entropy(_t(m, [0.25]), _t(m, [1.0]),
                                                                      weight=_t(m, [2.0], "float64")),
    "bce ends": lambda m: m.nn.functional.binary_cross_entropy(_t(m, [0.0, 1.0]), _t(m, [1.0, 0.0]), reduction="none"),
    "huber delta 0": lambda m: m.nn.functional.huber_loss(_t(m, [0.5]), _t(m, [2.0]), delta=0.0),
    "huber delta -1": lambda m: m.nn.functional.huber_loss(_t(m, [0.5]), _t(m, [2.0]), delta=-1.0),
    "huber delta nan": lambda m: m.nn.functional.huber_loss(_t(m, [0.5]), _t(m, [2.0]), delta=float("nan")),
    "huber delta 0.5": lambda m: m.nn.functional.huber_loss(_t(m, [0.5]), _t(m, [2.0]), delta=0.5),
    "kl_div negative target": lambda m: m.nn.functional.kl_div(_t(m, [-1.0, -1.0]), _t(m, [-2.0, 0.5]),
                                                              reduction="none"),
    "kl_div zero target": lambda m: m.nn.functional.kl_div(_t(m, [-1.0, -1.0]), _t(m, [0.0, 0.5]), reduction="sum"),
    "kl_div integral": lambda m: m.nn.functional.kl_div(_t(m, [-1.0]), _t(m, [1], "int64"), reduction="sum"),
    "cross_entropy negative smoothing": lambda m: m.nn.functional.cross_entropy(
        _t(m, [[1.0, 2.0, 3.0]]), m.tensor([0]), label_smoothing=-0.1),
    "cross_entropy nan smoothing": lambda m: m.nn.functional.cross_entropy(
        _t(m, [[1.0, 2.0, 3.0]]), _t(m, [[0.2, 0.3, 0.5]]), label_smoothing=float("nan")),
    "cross_entropy smoothing above 1": lambda m: m.nn.functional.cross_entropy(
        _t(m, [[1.0, 2.0, 3.0]]), m.tensor([0]), label_smoothing=1.5),
    "bce_with_logits int": lambda m: m.nn.functional.binary_cross_entropy_with_logits(_t(m, [1], "int64"),
                                                                                      _t(m, [1.0])),
}


@pytest.mark.parametrize("name", sorted(LOSS_CALLS))
def test_losses_check_their_arguments(name):
    # NotImplementedError texts name PyTorch's CPU kernels ("mse_cpu"); the core names the op
    call = LOSS_CALLS[name]
    (_, mine), (_, theirs) = both(call)
    assert_same(call, message=None if isinstance(theirs, NotImplementedError) else "all")


@pytest.mark.parametrize("name", ["mse_loss", "huber_loss", "smooth_l1_loss"])
def test_pointwise_losses_of_integer_tensors_are_not_implemented(name):
    (_, mine), (_, theirs) = both(lambda m: getattr(m.nn.functional, name)(_t(m, [1], "int64"), _t(m, [2], "int64")))
    assert type(mine) is type(theirs) is NotImplementedError
    assert str(mine).split('"')[1] in str(theirs)


# -- layers: argument checks -----------------------------------------------------------------------------
NN_CALLS = {
    "conv1d bias float64": lambda m: m.nn.functional.conv1d(m.ones(1, 1, 3), m.ones(1, 1, 2), m.ones(1, dtype=m.float64)),
    "conv2d bias int64": lambda m: m.nn.functional.conv2d(m.ones(1, 1, 3, 3), m.ones(1, 1, 2, 2),
                                                          m.ones(1, dtype=m.int64)),
    "conv1d bias dtype first": lambda m: m.nn.functional.conv1d(m.ones(3), m.ones(1, 1, 2), m.ones(2, dtype=m.float16)),
    "conv1d same padding casts the bias": lambda m: m.nn.functional.conv1d(m.ones(1, 1, 3), m.ones(1, 1, 3),
                                                                           m.ones(1, dtype=m.float64), padding="same"),
    "bilinear bias float64": lambda m: m.nn.functional.bilinear(m.ones(2, 3), m.ones(2, 3), m.ones(4, 3, 3),
                                                                m.ones(4, dtype=m.float64)),
    "bilinear input2 float64": lambda m: m.nn.functional.bilinear(m.ones(2, 3), m.ones(2, 3, dtype=m.float64),
                                                                  m.ones(4, 3, 3)),
    "embedding 1-D weight": lambda m: m.nn.functional.embedding(m.tensor([0]), m.ones(3)),
    "embedding 3-D weight": lambda m: m.nn.functional.embedding(m.tensor([0]), m.ones(3, 2, 2)),
    "embedding 0-D weight": lambda m: m.nn.functional.embedding(m.tensor([0]), m.tensor(1.0), padding_idx=0),
    "embedding 1-D weight max_norm": lambda m: m.nn.functional.embedding(m.tensor([0]), m.ones(3), max_norm=1.0),
    "narrow bool start": lambda m: m.ones(3).narrow(0, True, 1),
    "narrow bool dim": lambda m: m.ones(3).narrow(False, 0, 1),
    "select bool index": lambda m: m.ones(3).select(0, True),
    "cumsum bool dim": lambda m: m.ones(3).cumsum(True),
    "reshape bool size": lambda m: m.ones(6).reshape([True, 6]),
}


@pytest.mark.parametrize("name", sorted(NN_CALLS))
def test_layers_check_dtypes_and_ranks(name):
    # the TypeErrors of PyTorch's argument parser name positions its own way: the type is what counts
    assert_same(NN_CALLS[name], message=None if "bool" in name and "bias" not in name else "all")


POOL_SHAPES = [(4,), (0, 4), (2, 0), (3, 4), (1, 0, 4), (0, 1, 4), (2, 3, 0), (1, 1, 1, 4), (0, 4, 4), (1, 0, 4, 4),
               (0, 1, 4, 4), (1, 1, 0, 4), (4, 4), (2, 4, 4)]
POOLS = {
    "max_pool1d": lambda m, x: m.nn.functional.max_pool1d(x, 2),
    "max_pool1d_indices": lambda m, x: m.nn.functional.max_pool1d(x, 2, return_indices=True),
    "max_pool2d": lambda m, x: m.nn.functional.max_pool2d(x, 2),
    "max_pool2d_indices": lambda m, x: m.nn.functional.max_pool2d(x, 2, return_indices=True),
    "avg_pool1d": lambda m, x: m.nn.functional.avg_pool1d(x, 2),
    "avg_pool2d": lambda m, x: m.nn.functional.avg_pool2d(x, 2),
    "adaptive_avg_pool1d": lambda m, x: m.nn.functional.adaptive_avg_pool1d(x, 2),
    "adaptive_avg_pool2d": lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, 2),
}


@pytest.mark.parametrize("shape", POOL_SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(POOLS))
def test_pooling_input_ranks_and_empty_dims(name, shape):
    assert_same(lambda m: POOLS[name](m, m.ones(*shape)))


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("name", sorted(POOLS))
def test_pooling_integer_dtypes(name, dtype):
    def call(m):
        x = m.tensor([[[-3, -2, 5, 4, 1, 1, 7], [0, 9, -4, 2, 2, 8, -1]]]).to(getattr(m, dtype))
        return POOLS[name](m, x if "2d" not in name else x.unsqueeze(0))
    (_, mine), (_, theirs) = both(call)
    # NotImplementedError texts name PyTorch's CPU kernels
    assert_same(call, message=None if isinstance(theirs, NotImplementedError) else "all")


@pytest.mark.parametrize("kwargs", [{}, {"stride": 2, "padding": 1}, {"padding": 1, "count_include_pad": False},
                                    {"ceil_mode": True}, {"stride": 1}])
def test_avg_pool_of_int64_truncates_like_torch(kwargs):
    x = [[[-3, -2, 5, 4, 1, 1, 7], [0, 9, -4, 2, 2, 8, -1]]]
    assert_same(lambda m: m.nn.functional.avg_pool1d(m.tensor(x), 3, **kwargs))
    kw2 = dict(kwargs, **({"padding": (0, kwargs["padding"])} if "padding" in kwargs else {}))
    assert_same(lambda m: m.nn.functional.avg_pool2d(m.tensor(x), (1, 3), **kw2))
    assert_same(lambda m: m.nn.functional.avg_pool2d(m.tensor(x), (2, 2), divisor_override=3))


# -- Python operators called directly ---------------------------------------------------------------------
REFLECTED = ["__radd__", "__rsub__", "__rmul__", "__rtruediv__", "__rfloordiv__", "__rmod__", "__rpow__", "__rand__",
             "__ror__", "__rxor__", "__rmatmul__"]


@pytest.mark.parametrize("other", ["tensor", "int", "float", "str"])
@pytest.mark.parametrize("name", REFLECTED)
def test_reflected_operators_called_directly(name, other):
    def call(m):
        x = m.tensor([[3, 5], [7, 2]]) if name not in ("__rtruediv__", "__rpow__") else m.tensor([[3.0, 5], [7, 2]])
        y = {"tensor": lambda: m.tensor([[2, 4], [1, 6]]), "int": lambda: 2, "float": lambda: 2.5,
             "str": lambda: "a"}[other]()
        return getattr(x, name)(y)
    (_, mine), (_, theirs) = both(call)
    assert_same(call, message=None if isinstance(theirs, NotImplementedError) else "all")


# -- broadcast_shapes ---------------------------------------------------------------------------------------
SHAPES = [(5, (1,)), (5,), (2, 3), ((2, 3), (3,)), ((2, 3), (4,)), ((-1,),), (-1,), ([2, 1], (1, 4)), (), ((),),
          ((2, 1), 3), ((1, 0), (3, 1)), (0, 1), ((2,), (0,)), (None, (2,)), (2.5,), ((3,), (-1,)), ((1,), (-2,))]


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_broadcast_shapes_takes_ints_as_1d_shapes(shapes):
    assert_same(lambda m: tuple(m.broadcast_shapes(*shapes)))


# -- normalization and gather on empty inputs ------------------------------------------------------------------
def _batch_norm_run(shape, training, stats, affine):
    def run(m):
        c = shape[1]
        x = m.ones(*shape, requires_grad=True)
        rm, rv = (m.zeros(c), m.ones(c)) if stats else (None, None)
        w, b = (m.ones(c, requires_grad=True), m.zeros(c, requires_grad=True)) if affine else (None, None)
        y = m.nn.functional.batch_norm(x, rm, rv, w, b, training=training)
        y.sum().backward()
        return (y, x.grad) + ((rm, rv) if stats else ()) + ((w.grad, b.grad) if affine else ())
    return run


@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("stats", [False, True])
@pytest.mark.parametrize("training", [False, True])
@pytest.mark.parametrize("shape", [(0, 3), (0, 3, 4), (2, 3, 0), (2, 0), (2, 0, 4)], ids=str)
def test_batch_norm_of_empty_inputs(shape, training, stats, affine):
    if affine and shape[1] == 0:
        pytest.skip("PyTorch fails (an IndexError in select) for a weight of no channels")
    assert_same(_batch_norm_run(shape, training, stats, affine))


@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("shape,groups", [((0, 4), 2), ((0, 4, 5), 2), ((0, 4, 0), 2), ((2, 0), 2), ((0, 0), 1),
                                          ((2, 4, 3), 2)], ids=str)
def test_group_norm_of_empty_inputs(shape, groups, affine):
    def run(m):
        c = shape[1]
        x = m.ones(*shape, requires_grad=True)
        w, b = (m.ones(c, requires_grad=True), m.zeros(c, requires_grad=True)) if affine else (None, None)
        y = m.nn.functional.group_norm(x, groups, w, b)
        y.sum().backward()
        return (y, x.grad) + ((w.grad, b.grad) if affine else ())
    assert_same(run)


def test_batch_norm_module_keeps_its_statistics_on_an_empty_batch():
    def run(m):
        mod = m.nn.BatchNorm1d(3)
        mod(m.ones(0, 3))
        return mod.running_mean, mod.running_var, mod.num_batches_tracked
    assert_same(run)


@pytest.mark.parametrize("self_shape,dim,index_shape", [((0, 3), 1, (0, 2)), ((3, 0), 0, (2, 0)), ((2, 3), 1, (2, 0)),
                                                        ((0,), 0, (0,)), ((0, 3), 0, (0, 3))], ids=str)
def test_gather_of_empty_inputs(self_shape, dim, index_shape):
    def run(m):
        x = m.ones(*self_shape, requires_grad=True)
        y = m.gather(x, dim, m.zeros(*index_shape, dtype=m.int64))
        y.sum().backward()
        return y, x.grad
    assert_same(run)


# -- norm's gradients ---------------------------------------------------------------------------------------
NORM_X = [[1.5, -2.0, 0.0], [3.0, -3.0, 0.5]]


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [None, 1, (0, 1)])
@pytest.mark.parametrize("p", [0, 0.5, 1, 1.5, 2, 3, -1, float("inf"), -float("inf"), "fro"])
def test_norm_requires_grad_and_its_gradients(p, dim, keepdim):
    def run(m):
        x = m.tensor(NORM_X, dtype=m.float64, requires_grad=True)
        n = m.norm(x, p, dim, keepdim)
        assert n.requires_grad
        n.sum().backward()
        return n, x.grad
    assert_same(run)


@pytest.mark.parametrize("p", [0.5, 1.5, 2, 3, -1])
def test_norm_double_backward(p):
    def run(m):
        x = m.tensor(NORM_X, dtype=m.float64, requires_grad=True)
        (g,) = m.autograd.grad(m.norm(x + 1, p), x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        return g, gg
    assert_same(run)


# -- pad with negative (cropping) pads ------------------------------------------------------------------------
PADS = [((5,), (-1, -2), "constant"), ((5,), (-6, 2), "constant"), ((2, 5), (-1, -1, 1, -1), "constant"),
        ((1, 5), (-1, -2), "reflect"), ((1, 5), (-1, 2), "reflect"), ((1, 5), (2, -1), "reflect"),
        ((1, 5), (-3, 4), "reflect"), ((1, 5), (3, -3), "reflect"), ((1, 5), (-6, 2), "reflect"),
        ((1, 5), (-5, 0), "reflect"), ((1, 5), (-1, -1), "replicate"), ((1, 5), (2, -1), "replicate"),
        ((1, 5), (-6, 2), "replicate"), ((1, 5), (-1, 2), "circular"), ((1, 5), (2, -1), "circular"),
        ((1, 5), (-2, -2), "circular"), ((1, 5), (-3, -3), "circular"), ((1, 5), (6, -1), "circular"),
        ((1, 2, 3, 4), (-1, 1, 1, -1), "reflect"), ((1, 2, 3, 4), (-1, 1, 1, -1), "replicate"),
        ((1, 2, 3, 4), (-1, 1, 1, -1), "circular"), ((1, 1, 3, 4), (-4, 0, -3, 0), "reflect"),
        ((1, 1, 3, 4), (-4, 0, -3, 0), "replicate"), ((1, 1, 2, 3, 4), (-4, 0, -3, 0, -2, 0), "replicate"),
        ((1, 1, 2, 3, 4), (1, -2, -1, 1, 1, -1), "reflect"), ((1, 1, 3, 4), (0, 0, -3, 0), "reflect")]


@pytest.mark.parametrize("shape,pad,mode", PADS, ids=str)
def test_pad_with_negative_pads(shape, pad, mode):
    def run(m):
        x = m.arange(float(np.prod(shape))).reshape(shape).requires_grad_()
        y = m.nn.functional.pad(x, pad, mode)
        y.sum().backward()
        return y, x.grad
    assert_same(run)


@pytest.mark.parametrize("args", [(0, 6, -1), (5, 0, -1), (0, -6, 1), (0, 3, 3), (0, -2, 2)], ids=str)
def test_narrow_checks_in_torch_order(args):
    assert_same(lambda m: m.ones(5).narrow(*args))
