"""The Tensor user API against PyTorch itself (skipped where torch is not installed).

Indexing, assignment, views, factories, printing and error messages are run
through both libraries on the same inputs; names are mapped ``torch`` ->
``tensorplug`` before comparing strings.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import tensorplug as tp

torch = pytest.importorskip("torch")


def both(fn):
    """Run ``fn(lib)`` with tensorplug and torch; each result is (value or None, error or None)."""
    out = []
    for lib in (tp, torch):
        try:
            out.append((fn(lib), None))
        except Exception as e:  # noqa: BLE001 - the error itself is what is compared
            out.append((None, e))
    return out


def _np(x):
    if isinstance(x, tp.Tensor):
        return x.numpy()
    return x.detach().numpy()


def assert_same(fn, compare_messages=True):
    (mine, my_err), (theirs, their_err) = both(fn)
    if their_err is not None or my_err is not None:
        assert my_err is not None and their_err is not None, f"tensorplug: {my_err!r}, torch: {their_err!r}"
        assert type(my_err).__name__ == type(their_err).__name__
        if compare_messages:
            assert str(my_err) == str(their_err).replace("torch.", "tensorplug.")
        return
    assert tuple(mine.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(_np(mine), _np(theirs))


def base(lib):
    return lib.arange(24).reshape(2, 3, 4)


GET_KEYS = [
    0, -1, (1, 2), (0, -1, 3), slice(1, None), (slice(None), slice(1, 3), slice(None, None, 3)), None, (None, 0),
    Ellipsis, (Ellipsis, 1), (0, Ellipsis, None), [0, 1], [], (slice(None), [2, 0], slice(1, 3)),
    ([1, 0], slice(None), [3, 0]), (slice(None), [0, 1], [[0], [1]]), ([0], Ellipsis, [0]),
    (0, slice(None), [0, 1]), (1, Ellipsis, [0, 1, 2]), ([0, 1], slice(None), 1), True, False, (0, False),
    ([0, 1], True), (None, [0, 1]), ([0, 1], None), 5, (0, 5), (None, 0, 7), (Ellipsis, 7), (0, 0, 0, 0),
    slice(None, None, -1), ([0, 1], [0, 1, 2]), 1.0,
    # sequences in an index position, numpy scalars and arrays, and short lists read as tuples
    range(2), range(0), range(3), (slice(None), range(1, 3)), (range(2), range(2)), (range(2), slice(None), [3, 0]),
    ((1, 0), 2), [[0, 1], [1, 0]], [0, slice(None), 1], [1, None], [Ellipsis, 0], [range(2)], [0] * 40,
    np.int64(1), (np.int32(1), np.int64(2)), np.array(1), (np.array(1), slice(None), np.array(2)),
    np.array([[0, 1], [1, 0]]), np.array([1, 0], dtype=np.int32), np.True_, (0, np.float64(1)), [0.5],
    (0, [1.7, 0.2]), np.array([2.5]), np.array([0, 1], dtype=np.uint8), (0, "a"), (0, [1, "a"]), {0: 1},
    (slice(None), [[0, 1], [2]]), (slice(None), [1, None]), [1, 2 ** 63],
]


# both libraries warn for these keys; test_getitem_warnings compares the warnings
_INDEX_WARNINGS = pytest.mark.filterwarnings("ignore:Using a non-tuple sequence", "ignore:indexing with dtype")


@_INDEX_WARNINGS
@pytest.mark.parametrize("key", GET_KEYS, ids=repr)
def test_getitem(key):
    assert_same(lambda lib: base(lib)[key])


@pytest.mark.parametrize("mask", ["x > 5", "x[0] > 5", "(x % 2 == 0)[:, 0]"])
def test_getitem_masks(mask):
    assert_same(lambda lib: (lambda x: x[eval(mask, {"x": x})])(base(lib)))


TENSOR_KEYS = [
    lambda lib: lib.tensor([5]), lambda lib: lib.tensor([-3]), lambda lib: lib.tensor([0.5]),
    lambda lib: lib.tensor([True, False, True]), lambda lib: lib.tensor(1), lambda lib: lib.tensor(True),
    lambda lib: lib.tensor([[0, 1], [1, 0]]), lambda lib: lib.tensor([1, 0], dtype=lib.int32),
    lambda lib: lib.tensor(1, dtype=lib.int16), lambda lib: lib.tensor(-1, dtype=lib.int8),
    lambda lib: lib.tensor(1, dtype=lib.uint8), lambda lib: lib.tensor(7), lambda lib: (lib.tensor(1), [0, 2]),
    lambda lib: [lib.tensor(1), lib.tensor(2)], lambda lib: (Ellipsis, lib.tensor(3)),
]


@_INDEX_WARNINGS
@pytest.mark.parametrize("key", TENSOR_KEYS, ids=range(len(TENSOR_KEYS)))
def test_getitem_tensor_keys(key):
    assert_same(lambda lib: base(lib)[key(lib)])


WARNING_KEYS = [
    lambda lib: [[0, 1], [1, 0]], lambda lib: [0, slice(None)], lambda lib: [1, None], lambda lib: [Ellipsis, 0],
    lambda lib: [lib.tensor(1), lib.tensor(2)], lambda lib: [0, 1], lambda lib: [0] * 40, lambda lib: (range(2),),
    lambda lib: np.array([1, 0], dtype=np.uint8), lambda lib: lib.tensor([1, 0], dtype=lib.uint8),
    lambda lib: np.array([[0, 1], [1, 0]]),
]


@pytest.mark.parametrize("key", WARNING_KEYS, ids=range(len(WARNING_KEYS)))
def test_getitem_warnings(key):
    def messages(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            base(lib)[key(lib)]
        # PyTorch's C++ warnings end with where they were raised
        return [re.sub(r" \(Triggered internally at .*\)$", "", str(w.message)).replace("torch.", "tensorplug.")
                for w in caught]
    assert messages(tp) == messages(torch)


VIEW_KEYS = [
    lambda lib: lib.tensor(1), lambda lib: (0, lib.tensor(2, dtype=lib.int32)), lambda lib: np.int64(1),
    lambda lib: np.array(1), lambda lib: (lib.tensor(1), slice(None), np.array(3)), lambda lib: [1, 0],
    lambda lib: range(1), lambda lib: lib.tensor([1]),
]


@pytest.mark.parametrize("key", VIEW_KEYS, ids=range(len(VIEW_KEYS)))
def test_getitem_views_and_copies(key):
    # whether a write into x[key] reaches x: ints (0-dim integer tensors too) give views, sequences copies
    def run(lib):
        x = base(lib).clone()
        x[key(lib)].fill_(-1)
        return x
    assert_same(run)


SET_CASES = [
    (0, 7), ((1, 2), 7.9), ((slice(None), 1), [100, 200, 300, 400]), ([1, 0], 9),
    ((slice(None), [2, 0]), [[1, 2, 3, 4]]),
    ((0, [1, 2], 3), [50, 60]), (True, 4), (0, [1, 2]), (slice(None), [[1.5] * 4] * 2), ([0, 7], 1.),
    (range(1, 2), 3), ((range(2), 1, range(1, 3)), [8, 9]), ((1, range(3)), [[7], [8], [9]]),
    ((np.int64(1), np.array(2)), 5), ([[0, 1], [1, 0]], 9),
]


@_INDEX_WARNINGS
@pytest.mark.parametrize("key,value", SET_CASES, ids=range(len(SET_CASES)))
def test_setitem(key, value):
    def run(lib):
        x = base(lib).clone()
        x[key] = lib.tensor(value) if isinstance(value, list) else value
        return x
    assert_same(run)


VIEWS = [
    lambda x: x.view(4, -1), lambda x: x.permute(2, 0, 1), lambda x: x.transpose(0, 2), lambda x: x.mT,
    lambda x: x[:, :1].expand(2, 5, 4), lambda x: x.unsqueeze(1), lambda x: x[:, :1].squeeze(), lambda x: x.flatten(1),
    lambda x: x.unflatten(2, (2, -1)), lambda x: x.narrow(1, -2, 2), lambda x: x.select(2, 1),
    lambda x: x.diagonal(1, 1, 2), lambda x: x.diagonal(-5, 1, 2), lambda x: x.unfold(2, 2, 1),
    lambda x: x.movedim(0, -1),
    lambda x: x.as_strided((3, 3), (4, 1), 2), lambda x: x.transpose(0, 1).reshape(-1), lambda x: x.view(5, -1),
    lambda x: x.view(-2, 12), lambda x: x.transpose(0, 1).view(-1), lambda x: x.expand(3, 3, 4),
    lambda x: x.narrow(2, 5, 0), lambda x: x.select(1, 3), lambda x: x.unfold(2, 5, 1), lambda x: x.permute(2, 0),
    lambda x: x.movedim((0, 0), (1, 2)), lambda x: x.unflatten(2, (3, -1)),
    lambda x: x.view(size=(4, -1)), lambda x: x.reshape(shape=[6, 4]), lambda x: x.permute(dims=(2, 0, 1)),
    lambda x: x.expand(size=(2, 2, 3, 4)), lambda x: x.reshape(2, shape=(2, 12)), lambda x: x.reshape(shape=24),
]


@pytest.mark.parametrize("op", VIEWS, ids=range(len(VIEWS)))
def test_views_and_their_strides(op):
    assert_same(lambda lib: op(base(lib)))
    (mine, _), (theirs, _) = both(lambda lib: op(base(lib)))
    if mine is not None:
        assert mine.stride() == theirs.stride()


FACTORIES = [
    lambda lib: lib.tensor([[1, 2], [3]]), lambda lib: lib.tensor([1, 2.5]), lambda lib: lib.tensor([True, 1]),
    lambda lib: lib.tensor(np.array([1, 2], dtype=np.int32)), lambda lib: lib.tensor([np.float64(1.5)]),
    lambda lib: lib.tensor([[1, 2], 3]), lambda lib: lib.tensor("a"), lambda lib: lib.tensor([2 ** 63]),
    lambda lib: lib.tensor([1, 2 ** 63]), lambda lib: lib.tensor([1.5, 2 ** 63]),
    lambda lib: lib.tensor([2 ** 64, 1.5]),
    lambda lib: lib.tensor([[2 ** 64], [np.float64(1)]]), lambda lib: lib.tensor([True, -2 ** 63 - 1]),
    lambda lib: lib.arange(0, 1, 0.1), lambda lib: lib.arange(5, -6, -2), lambda lib: lib.arange(1, 5, -1),
    lambda lib: lib.arange(0.5, 3, dtype=lib.int64), lambda lib: lib.linspace(-1, 1, 4, dtype=lib.int64),
    lambda lib: lib.linspace(0, 1, 7), lambda lib: lib.eye(2, 3), lambda lib: lib.eye(2, -1),
    lambda lib: lib.full((2,), True), lambda lib: lib.full_like(lib.ones(2, dtype=lib.int64), 2.7),
    lambda lib: lib.from_numpy(np.arange(5)[::-1]), lambda lib: lib.arange(end=4), lambda lib: lib.arange(end=2.5),
    lambda lib: lib.arange(start=1, end=4),
]


@pytest.mark.parametrize("make", FACTORIES, ids=range(len(FACTORIES)))
def test_factories(make):
    assert_same(make)
    (mine, _), (theirs, _) = both(make)
    if mine is not None:
        assert mine.dtype.name == str(theirs.dtype).replace("torch.", "")


SIZE_CALLS = [
    "L.empty(size=(2, 3))", "L.zeros(size=[2, 3], dtype=L.int64)", "L.zeros(size=())", "L.ones(size=(2,))",
    "L.full(size=(2,), fill_value=3)", "L.rand(size=(2, 3))", "L.randn(size=(4,), dtype=L.float64)",
    "L.normal(0., 1., size=(2,))", "L.randint(10, size=(3,))", "L.randint(10, size=())",
    "L.randint(high=10, size=(3,))", "L.randint(2, 10, size=(3,))", "L.randint(2, high=10, size=(3,))",
    "L.randint(low=2, high=10, size=(3,))", "L.randint(size=(3,), high=10, dtype=L.int32)", "L.randint(10, (3,))",
    "L.zeros()", "L.empty()", "L.zeros(2, size=(2,))", "L.zeros(size=2)", "L.randint(10, size=3)",
    "L.randint(3, 10)", "L.randint(5.5, (2,))", "L.randint(high=3.5, size=(2,))", "L.randint(True, (2,))",
]
# PyTorch's argument parser words these as "received an invalid combination of arguments" or
# "missing 2 required positional argument": the error type is compared, not the message
SIZE_CALLS_OTHER_WORDS = {"L.rand()", "L.randint(10)", "L.randint(low=2, size=(3,))",
                          "L.randint(0, 10, (2,), size=(2,))", "L.randn(2, size=(2,))", "L.randint(1.5, 3, (2,))"}


@pytest.mark.parametrize("expr", SIZE_CALLS + sorted(SIZE_CALLS_OTHER_WORDS))
def test_factories_size_argument(expr):
    (mine, my_err), (theirs, their_err) = both(lambda lib: eval(expr, {"L": lib}))
    if my_err is not None or their_err is not None:
        assert my_err is not None and their_err is not None, f"tensorplug: {my_err!r}, torch: {their_err!r}"
        assert type(my_err) is type(their_err)
        if expr not in SIZE_CALLS_OTHER_WORDS:
            assert str(my_err) == str(their_err)
        return
    assert tuple(mine.shape) == tuple(theirs.shape) and mine.dtype.name == str(theirs.dtype).replace("torch.", "")


RANDOM_ERRORS = [
    lambda lib: lib.empty(3).uniform_(2, 1), lambda lib: lib.empty(3).normal_(0, -1),
    lambda lib: lib.empty(3).bernoulli_(2), lambda lib: lib.bernoulli(lib.tensor([0.5, 2.0])),
    lambda lib: lib.empty(3, dtype=lib.int64).random_(5, 3), lambda lib: lib.empty(3, dtype=lib.uint8).random_(-1, 5),
    lambda lib: lib.empty(3, dtype=lib.int16).random_(0, 2 ** 20), lambda lib: lib.randint(5, 3, (2,)),
    lambda lib: lib.randperm(-1), lambda lib: lib.multinomial(lib.tensor([0., 1.]), 3),
    lambda lib: lib.multinomial(lib.tensor([0., 0.]), 1), lambda lib: lib.multinomial(lib.ones(2, 2, 2), 1),
    lambda lib: lib.normal(lib.zeros(3), -lib.ones(3)), lambda lib: lib.Generator().manual_seed(2 ** 64),
    lambda lib: lib.Generator().manual_seed(1.5),
]


@pytest.mark.parametrize("call", RANDOM_ERRORS, ids=range(len(RANDOM_ERRORS)))
def test_random_errors(call):
    (_, mine), (_, theirs) = both(call)
    assert mine is not None and theirs is not None
    assert type(mine).__name__ == type(theirs).__name__
    # PyTorch appends "(Could this error message be improved? ...)" to some C++ checks
    assert str(theirs).startswith(str(mine))


def test_random_ranges_agree():
    for dtype in ("bool", "uint8", "int8", "float16", "bfloat16", "float32"):
        hi_mine = tp.empty(20000, dtype=getattr(tp, dtype)).random_().to(tp.float64).numpy().max()
        hi_torch = torch.empty(20000, dtype=getattr(torch, dtype)).random_().double().max().item()
        bound = {"bool": 1, "uint8": 255, "int8": 127, "float16": 2 ** 11, "bfloat16": 2 ** 8, "float32": 2 ** 24}
        assert hi_mine <= bound[dtype] and hi_torch <= bound[dtype]
        assert hi_mine > 0.9 * bound[dtype] and hi_torch > 0.9 * bound[dtype]


PRINTS = [
    "tensor([1.0, 2.5])", "tensor([1e-5, 1e5])", "tensor([float('nan'), 1.5, -float('inf')])", "zeros(0, 3)",
    "tensor([1, 2], dtype=L.int32)", "tensor([True, False])", "arange(2000.)", "arange(1001.).reshape(7, 143)",
    "arange(60.).reshape(3, 20) / 3", "tensor([[1.5, -2.25], [1e3, 4.]])", "tensor(3.)",
    "tensor([1., 2.], requires_grad=True)",
    "arange(24).reshape(2, 3, 4)", "tensor([1.5, 2.], dtype=L.bfloat16)", "linspace(0, 1, 25)", "tensor([0.0001, 1.5])",
    # large tensors print only their edges, formatted from those alone
    "zeros(5 * 10 ** 7)", "arange(5 * 10 ** 6).reshape(1000, 5000)", "zeros(1, 1).expand(10 ** 6, 10 ** 6)",
    "(arange(3 * 10 ** 6) % 7 - 3).reshape(100, 100, 300).to(L.int8)", "arange(4000.).reshape(2, 2000) * 1e-3",
    "L.cat([L.ones(3), L.full((2000,), 1e10), L.full((3,), 0.5)])", "zeros(4000, dtype=L.bool)[::2]",
    "linspace(-1, 1, 3000, dtype=L.bfloat16).reshape(3, 1000)", "arange(2000.).reshape(1, 2000).requires_grad_()",
    "arange(7 * 7 * 7 * 7.).reshape(7, 7, 7, 7) / 7",
]


@pytest.mark.parametrize("expr", PRINTS)
def test_printing(expr):
    got = repr(eval(expr, {"L": tp, **{k: getattr(tp, k) for k in ("tensor", "zeros", "arange", "linspace")}}))
    want = repr(eval(expr, {"L": torch, **{k: getattr(torch, k) for k in ("tensor", "zeros", "arange", "linspace")}}))
    assert got == re.sub(r"torch\.", "tensorplug.", want)
