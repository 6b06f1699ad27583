"""Tensor printing: exact strings checked against PyTorch's output for the same tensors.

The expected strings were produced by PyTorch 2.13 (``repr`` of the same
expression with ``torch`` for ``tensorplug``), with only the namespace of
dtype names changed.
"""

from __future__ import annotations

import pytest

import tensorplug as tp
from tensorplug import _state
from tensorplug.backend import backend_of

NS = {"DT": tp, "float": float, "tensor": tp.tensor, "zeros": tp.zeros, "ones": tp.ones, "arange": tp.arange,
      "linspace": tp.linspace}

CASES = [
    ('tensor([1.0, 2.5])',
     'tensor([1.0000, 2.5000])'),
    ('tensor([1., 2.])',
     'tensor([1., 2.])'),
    ('tensor([1e-5, 1e5])',
     'tensor([1.0000e-05, 1.0000e+05])'),
    ('tensor(3.)',
     'tensor(3.)'),
    ('tensor(3)',
     'tensor(3)'),
    ('tensor(True)',
     'tensor(True)'),
    ('tensor(2.5)',
     'tensor(2.5000)'),
    ('tensor(-0.5)',
     'tensor(-0.5000)'),
    ('tensor(1e-10)',
     'tensor(1.0000e-10)'),
    ('tensor(123456789.)',
     'tensor(1.2346e+08)'),
    ("tensor(float('nan'))",
     'tensor(nan)'),
    ('tensor([])',
     'tensor([])'),
    ('zeros(0, 3)',
     'tensor([], size=(0, 3))'),
    ('zeros(2, 0)',
     'tensor([], size=(2, 0))'),
    ('zeros(0, dtype=DT.int64)',
     'tensor([], dtype=tensorplug.int64)'),
    ('zeros(0, dtype=DT.bool)',
     'tensor([], dtype=tensorplug.bool)'),
    ('zeros(0, 3, dtype=DT.int32)',
     'tensor([], size=(0, 3), dtype=tensorplug.int32)'),
    ('zeros(1, 0, 2, dtype=DT.float64)',
     'tensor([], size=(1, 0, 2), dtype=tensorplug.float64)'),
    ('tensor([1, 2, 3])',
     'tensor([1, 2, 3])'),
    ('tensor([1, 2, 3], dtype=DT.int32)',
     'tensor([1, 2, 3], dtype=tensorplug.int32)'),
    ('tensor([-1, 10, 100], dtype=DT.int8)',
     'tensor([ -1,  10, 100], dtype=tensorplug.int8)'),
    ('tensor([1, 2], dtype=DT.uint8)',
     'tensor([1, 2], dtype=tensorplug.uint8)'),
    ('tensor(5, dtype=DT.int32)',
     'tensor(5, dtype=tensorplug.int32)'),
    ('tensor([True, False])',
     'tensor([ True, False])'),
    ('tensor([[True, False], [False, True]])',
     ('tensor([[ True, False],\n'
      '        [False,  True]])')),
    ('tensor([True, True])',
     'tensor([True, True])'),
    ('tensor([1., 2.], dtype=DT.float64)',
     'tensor([1., 2.], dtype=tensorplug.float64)'),
    ('tensor(5.5, dtype=DT.float64)',
     'tensor(5.5000, dtype=tensorplug.float64)'),
    ('tensor([1.5, 2.], dtype=DT.float16)',
     'tensor([1.5000, 2.0000], dtype=tensorplug.float16)'),
    ('tensor([1.5, 2.], dtype=DT.bfloat16)',
     'tensor([1.5000, 2.0000], dtype=tensorplug.bfloat16)'),
    ('tensor([1., 2.], requires_grad=True)',
     'tensor([1., 2.], requires_grad=True)'),
    ('zeros(2, 3, requires_grad=True)',
     ('tensor([[0., 0., 0.],\n'
      '        [0., 0., 0.]], requires_grad=True)')),
    ("tensor([float('nan'), 1., float('inf')])",
     'tensor([nan, 1., inf])'),
    ("tensor([float('nan'), 1.5, -float('inf')])",
     'tensor([   nan, 1.5000,   -inf])'),
    ("tensor([float('nan')])",
     'tensor([nan])'),
    ("tensor([float('inf'), -float('inf')])",
     'tensor([inf, -inf])'),
    ("tensor([2.0, float('nan')])",
     'tensor([2., nan])'),
    ('tensor([1e8, 1.])',
     'tensor([1.0000e+08, 1.0000e+00])'),
    ('tensor([1e7, 1.])',
     'tensor([1.0000e+07, 1.0000e+00])'),
    ('tensor([1e-4, 1.])',
     'tensor([1.0000e-04, 1.0000e+00])'),
    ('tensor([0.001, 1.0])',
     'tensor([0.0010, 1.0000])'),
    ('tensor([0.0001, 1.5])',
     'tensor([1.0000e-04, 1.5000e+00])'),
    ('tensor([123456.789, 1.5])',
     'tensor([1.2346e+05, 1.5000e+00])'),
    ('tensor([1000., 1.5])',
     'tensor([1000.0000,    1.5000])'),
    ('tensor([-1.5, 2.0])',
     'tensor([-1.5000,  2.0000])'),
    ('tensor([0., -0.])',
     'tensor([0., -0.])'),
    ('tensor([1e10, 2e10])',
     'tensor([1.0000e+10, 2.0000e+10])'),
    ('tensor([-1e-5, 123.])',
     'tensor([-1.0000e-05,  1.2300e+02])'),
    ('tensor([0.1, 0.25, 100.])',
     'tensor([  0.1000,   0.2500, 100.0000])'),
    ('tensor([[1.5, -2.25], [1e3, 4.]])',
     ('tensor([[   1.5000,   -2.2500],\n'
      '        [1000.0000,    4.0000]])')),
    ('tensor([[1e-5, 1.], [2., 3.]])',
     ('tensor([[1.0000e-05, 1.0000e+00],\n'
      '        [2.0000e+00, 3.0000e+00]])')),
    ('tensor([[[1.]]])',
     'tensor([[[1.]]])'),
    ('arange(12.).reshape(2, 3, 2)',
     ('tensor([[[ 0.,  1.],\n'
      '         [ 2.,  3.],\n'
      '         [ 4.,  5.]],\n'
      '\n'
      '        [[ 6.,  7.],\n'
      '         [ 8.,  9.],\n'
      '         [10., 11.]]])')),
    ('arange(24).reshape(2, 3, 4)',
     ('tensor([[[ 0,  1,  2,  3],\n'
      '         [ 4,  5,  6,  7],\n'
      '         [ 8,  9, 10, 11]],\n'
      '\n'
      '        [[12, 13, 14, 15],\n'
      '         [16, 17, 18, 19],\n'
      '         [20, 21, 22, 23]]])')),
    ('arange(8.).reshape(2, 2, 2) - 3.5',
     ('tensor([[[-3.5000, -2.5000],\n'
      '         [-1.5000, -0.5000]],\n'
      '\n'
      '        [[ 0.5000,  1.5000],\n'
      '         [ 2.5000,  3.5000]]])')),
    ('arange(30.)',
     ('tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n'
      '        14., 15., 16., 17., 18., 19., 20., 21., 22., 23., 24., 25., 26., 27.,\n'
      '        28., 29.])')),
    ('arange(30.) / 7',
     ('tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n'
      '        1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429, 2.2857, 2.4286,\n'
      '        2.5714, 2.7143, 2.8571, 3.0000, 3.1429, 3.2857, 3.4286, 3.5714, 3.7143,\n'
      '        3.8571, 4.0000, 4.1429])')),
    ('arange(100)',
     ('tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n'
      '        18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,\n'
      '        36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53,\n'
      '        54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71,\n'
      '        72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89,\n'
      '        90, 91, 92, 93, 94, 95, 96, 97, 98, 99])')),
    ('linspace(0, 1, 25)',
     ('tensor([0.0000, 0.0417, 0.0833, 0.1250, 0.1667, 0.2083, 0.2500, 0.2917, 0.3333,\n'
      '        0.3750, 0.4167, 0.4583, 0.5000, 0.5417, 0.5833, 0.6250, 0.6667, 0.7083,\n'
      '        0.7500, 0.7917, 0.8333, 0.8750, 0.9167, 0.9583, 1.0000])')),
    ('arange(60.).reshape(3, 20) / 3',
     ('tensor([[ 0.0000,  0.3333,  0.6667,  1.0000,  1.3333,  1.6667,  2.0000,  2.3333,\n'
      '          2.6667,  3.0000,  3.3333,  3.6667,  4.0000,  4.3333,  4.6667,  5.0000,\n'
      '          5.3333,  5.6667,  6.0000,  6.3333],\n'
      '        [ 6.6667,  7.0000,  7.3333,  7.6667,  8.0000,  8.3333,  8.6667,  9.0000,\n'
      '          9.3333,  9.6667, 10.0000, 10.3333, 10.6667, 11.0000, 11.3333, 11.6667,\n'
      '         12.0000, 12.3333, 12.6667, 13.0000],\n'
      '        [13.3333, 13.6667, 14.0000, 14.3333, 14.6667, 15.0000, 15.3333, 15.6667,\n'
      '         16.0000, 16.3333, 16.6667, 17.0000, 17.3333, 17.6667, 18.0000, 18.3333,\n'
      '         18.6667, 19.0000, 19.3333, 19.6667]])')),
    ('arange(2000.)',
     ('tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n'
      '        1.9990e+03])')),
    ('arange(2000)',
     'tensor([   0,    1,    2,  ..., 1997, 1998, 1999])'),
    ('arange(1001.).reshape(7, 143)',
     ('tensor([[   0.,    1.,    2.,  ...,  140.,  141.,  142.],\n'
      '        [ 143.,  144.,  145.,  ...,  283.,  284.,  285.],\n'
      '        [ 286.,  287.,  288.,  ...,  426.,  427.,  428.],\n'
      '        ...,\n'
      '        [ 572.,  573.,  574.,  ...,  712.,  713.,  714.],\n'
      '        [ 715.,  716.,  717.,  ...,  855.,  856.,  857.],\n'
      '        [ 858.,  859.,  860.,  ...,  998.,  999., 1000.]])')),
    ('arange(3000).reshape(30, 100)',
     ('tensor([[   0,    1,    2,  ...,   97,   98,   99],\n'
      '        [ 100,  101,  102,  ...,  197,  198,  199],\n'
      '        [ 200,  201,  202,  ...,  297,  298,  299],\n'
      '        ...,\n'
      '        [2700, 2701, 2702,  ..., 2797, 2798, 2799],\n'
      '        [2800, 2801, 2802,  ..., 2897, 2898, 2899],\n'
      '        [2900, 2901, 2902,  ..., 2997, 2998, 2999]])')),
    ('ones(1100)[:1001]',
     'tensor([1., 1., 1.,  ..., 1., 1., 1.])'),
    ('arange(1100).reshape(11, 100)[:, :3]',
     ('tensor([[   0,    1,    2],\n'
      '        [ 100,  101,  102],\n'
      '        [ 200,  201,  202],\n'
      '        [ 300,  301,  302],\n'
      '        [ 400,  401,  402],\n'
      '        [ 500,  501,  502],\n'
      '        [ 600,  601,  602],\n'
      '        [ 700,  701,  702],\n'
      '        [ 800,  801,  802],\n'
      '        [ 900,  901,  902],\n'
      '        [1000, 1001, 1002]])')),
    ('arange(9, dtype=DT.float64) / 3',
     ('tensor([0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, 2.6667],\n'
      '       dtype=tensorplug.float64)')),
    ('arange(10, dtype=DT.float64) / 3',
     ('tensor([0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, 2.6667,\n'
      '        3.0000], dtype=tensorplug.float64)')),
    ('(arange(9, dtype=DT.float64) / 3).requires_grad_()',
     ('tensor([0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, 2.6667],\n'
      '       dtype=tensorplug.float64, requires_grad=True)')),
]

OPTION_CASES = [
    ({'precision': 2}, 'tensor([1.2345, 2.5])',
     'tensor([1.23, 2.50])'),
    ({'precision': 6}, 'tensor([1.2345, 2.5])',
     'tensor([1.234500, 2.500000])'),
    ({'sci_mode': True}, 'tensor([1.5, 2.5])',
     'tensor([1.5000e+00, 2.5000e+00])'),
    ({'sci_mode': False}, 'tensor([1e-5, 1e5])',
     'tensor([     0.0000, 100000.0000])'),
    ({'sci_mode': True}, 'tensor([1., 2.])',
     'tensor([1.0000e+00, 2.0000e+00])'),
    ({'threshold': 5}, 'arange(10)',
     'tensor([0, 1, 2,  ..., 7, 8, 9])'),
    ({'threshold': 5, 'edgeitems': 2}, 'arange(10)',
     'tensor([0, 1,  ..., 8, 9])'),
    ({'threshold': 5, 'edgeitems': 1}, 'arange(20.).reshape(4, 5)',
     ('tensor([[ 0.,  ...,  4.],\n'
      '        ...,\n'
      '        [15.,  ..., 19.]])')),
    ({'linewidth': 30}, 'arange(20)',
     ('tensor([ 0,  1,  2,  3,  4,\n'
      '         5,  6,  7,  8,  9,\n'
      '        10, 11, 12, 13, 14,\n'
      '        15, 16, 17, 18, 19])')),
    ({'profile': 'short'}, 'tensor([1.2345, 2.5])',
     'tensor([1.23, 2.50])'),
    ({'profile': 'full'}, 'arange(1005)[-3:]',
     'tensor([1002, 1003, 1004])'),
    ({'profile': 'full'}, 'arange(1002)[::250]',
     'tensor([   0,  250,  500,  750, 1000])'),
    ({'threshold': 5, 'edgeitems': 0}, 'arange(10)',
     'tensor([...], size=(10,))'),
    ({'threshold': 5, 'edgeitems': 0}, 'arange(10, dtype=DT.int32).reshape(2, 5)',
     'tensor([...], size=(2, 5), dtype=tensorplug.int32)'),
]


@pytest.fixture(autouse=True)
def default_print_options():
    yield
    tp.set_printoptions(profile="default")


@pytest.mark.parametrize("expr,expected", CASES, ids=[c[0] for c in CASES])
def test_repr_matches_pytorch(expr, expected):
    t = eval(expr, NS)
    assert repr(t) == expected
    assert str(t) == expected


@pytest.mark.parametrize("options,expr,expected", OPTION_CASES, ids=[f"{c[0]}-{c[1]}" for c in OPTION_CASES])
def test_print_options_match_pytorch(options, expr, expected):
    tp.set_printoptions(**options)
    assert repr(eval(expr, NS)) == expected


def test_views_print_their_own_values():
    x = tp.arange(12.).reshape(3, 4)
    assert repr(x.t()[1:3]) == ("tensor([[ 1.,  5.,  9.],\n"
                                "        [ 2.,  6., 10.]])")
    assert repr(x[:, 1]) == "tensor([1., 5., 9.])"
    assert repr(x.expand(2, 3, 4)[1, 2]) == "tensor([ 8.,  9., 10., 11.])"


def test_device_suffix_for_non_default_device(monkeypatch):
    monkeypatch.setattr(_state, "default_device", tp.device("meta"))
    assert repr(tp.tensor([1, 2], device="cpu")) == "tensor([1, 2], device='cpu')"
    assert repr(tp.zeros(0, 2, dtype=tp.int32, device="cpu")) == ("tensor([], device='cpu', size=(0, 2), "
                                                                   "dtype=tensorplug.int32)")


def test_grad_fn_suffix():
    class MulBackward0:
        pass
    t = tp.tensor([1., 2.])
    t._grad_fn = MulBackward0()
    assert repr(t) == "tensor([1., 2.], grad_fn=<MulBackward0>)"


def test_default_dtype_changes_which_dtype_is_printed():
    old = tp.get_default_dtype()
    try:
        tp.set_default_dtype(tp.float64)
        assert repr(tp.tensor([1.5])) == "tensor([1.5000])"
        assert repr(tp.tensor([1.5], dtype=tp.float32)) == "tensor([1.5000], dtype=tensorplug.float32)"
    finally:
        tp.set_default_dtype(old)


def test_set_printoptions_resets_sci_mode_and_rejects_unknown_profiles():
    tp.set_printoptions(sci_mode=True, precision=2)
    assert repr(tp.tensor([1.5])) == "tensor([1.50e+00])"
    tp.set_printoptions(precision=3)
    assert repr(tp.tensor([1.5])) == "tensor([1.500])"
    assert tp._printing.get_printoptions()["precision"] == 3
    with pytest.raises(ValueError, match="unknown print profile 'long'"):
        tp.set_printoptions(profile="long")


def test_summarised_print_of_a_large_tensor_is_short():
    s = repr(tp.zeros(1000, 1000))
    assert s.count("\n") == 6 and s.count("...") == 7


def test_repr_of_a_half_constructed_tensor_does_not_raise():
    t = object.__new__(tp.Tensor)
    assert repr(t) == str(t) == f"{t}" == f"<tensorplug.Tensor object at {id(t):#x} (uninitialized)>"

    class Broken(tp.Tensor):
        def __init__(self, data):
            raise ValueError("bad data")

    with pytest.raises(ValueError, match="bad data"):
        Broken([1])
    b = object.__new__(Broken)  # what Broken([1]) had built when its __init__ failed
    assert repr(b) == f"<{Broken.__module__}.{Broken.__qualname__} object at {id(b):#x} (uninitialized)>"
    p = object.__new__(tp.nn.Parameter)
    assert repr(p).startswith("Parameter containing:\n<tensorplug.nn.parameter.Parameter object at ")


@pytest.fixture
def host_elements(monkeypatch):
    """The sizes of the arrays the CPU backend hands to the host (what printing converts), in call order."""
    backend = backend_of("cpu")
    real = backend.to_numpy
    sizes = []

    def to_numpy(native):
        arr = real(native)
        sizes.append(arr.size)
        return arr

    monkeypatch.setattr(backend, "to_numpy", to_numpy)
    return sizes


@pytest.mark.parametrize("make,shown", [
    (lambda: tp.zeros(5 * 10 ** 7), 6),
    (lambda: tp.arange(5 * 10 ** 6).reshape(1000, 5000), 36),
    (lambda: tp.zeros(1, 1).expand(10 ** 6, 10 ** 6), 36),
    (lambda: tp.ones(20, 3, 10 ** 5, dtype=tp.bfloat16).transpose(0, 2), 6 * 3 * 6),
    (lambda: tp.zeros(4000, dtype=tp.bool)[::2], 6),
], ids=["1-d", "2-d", "expanded", "transposed-bfloat16", "strided-bool"])
def test_repr_of_a_large_tensor_converts_only_what_it_shows(host_elements, make, shown):
    # PyTorch summarises before formatting: only the edge items reach the host, whatever the size
    t = make()
    host_elements.clear()
    text = repr(t)
    assert sum(host_elements) == shown
    assert text.count("...") >= 1 and len(text) < 1000


def test_summarised_format_is_chosen_from_the_shown_elements():
    # the huge values in the middle are not printed, so (as in PyTorch) they do not switch to scientific notation
    t = tp.cat([tp.ones(3), tp.full((2000,), 1e10), tp.full((3,), 0.5)])
    assert repr(t) == "tensor([1.0000, 1.0000, 1.0000,  ..., 0.5000, 0.5000, 0.5000])"
    tp.set_printoptions(edgeitems=0)
    assert repr(t) == "tensor([...], size=(2006,))"
