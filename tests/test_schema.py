"""Schemas in PyTorch's mini-language, and calls checked against them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import tensorplug as tp
from tensorplug.dispatch.schema import parse_schema, SchemaError

# Written as PyTorch prints them (torch._C.parse_schema(s) prints s back), so
# the parse must print them back unchanged.
PYTORCH_SCHEMAS = [
    "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
    "aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
    "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
    "aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
    "aten::cat(Tensor[] tensors, int dim=0) -> Tensor",
    "aten::_foreach_add_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()",
    "aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
    "aten::div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
    "aten::topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> "
    "(Tensor values, Tensor indices)",
    "aten::native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> "
    "(Tensor, Tensor, Tensor)",
    "aten::empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
    "Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
    "aten::sort.values(Tensor self, int dim=-1, bool descending=False, *, Tensor(a!) values, "
    "Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)",
    "aten::convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, "
    "SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor",
    "aten::std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor",
    "aten::scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, "
    "bool include_self=True) -> Tensor",
    "aten::foo(Tensor self, str reduce=\"mean\", int[] s=[], int[] p=[0, 1]) -> ()",
    "aten::single(Tensor self) -> Tensor out",
    "neg(Tensor self) -> Tensor",
]

# Inputs whose canonical form differs (spacing, quotes, a 1-tuple of returns).
CANONICAL = [
    ("f( Tensor  x ,int y = 1 )->Tensor", "f(Tensor x, int y=1) -> Tensor"),
    ("f(Tensor x, str r='sum') -> Tensor", 'f(Tensor x, str r="sum") -> Tensor'),
    ("f(Tensor x) -> (Tensor a)", "f(Tensor x) -> Tensor a"),
    ("f(Tensor(a->*) x) -> Tensor(a)[]", "f(Tensor(a -> *) x) -> Tensor(a)[]"),
]


@pytest.mark.parametrize("text", PYTORCH_SCHEMAS)
def test_pytorch_schemas_print_back_unchanged(text):
    assert str(parse_schema(text)) == text


@pytest.mark.parametrize("text, canonical", CANONICAL)
def test_canonical_form(text, canonical):
    assert str(parse_schema(text)) == canonical
    assert str(parse_schema(canonical)) == canonical


def test_pytorch_prints_the_same_schemas_torch_oracle():
    torch = pytest.importorskip("torch")
    for text in PYTORCH_SCHEMAS:
        assert str(torch._C.parse_schema(text)) == str(parse_schema(text))


ARG = "Tensor self, "
ARGUMENT_FIELDS = [
    # text, (type, is_list, list_len, optional, elem_optional, alias, is_write, alias_after)
    ("Tensor x", ("Tensor", False, None, False, False, None, False, None)),
    ("Tensor(a!) x", ("Tensor", False, None, False, False, "a", True, None)),
    ("Tensor(a) x", ("Tensor", False, None, False, False, "a", False, None)),
    ("Tensor(a -> *) x", ("Tensor", False, None, False, False, "a", False, "*")),
    ("Tensor(a|b!) x", ("Tensor", False, None, False, False, "a|b", True, None)),
    ("Tensor? x", ("Tensor", False, None, True, False, None, False, None)),
    ("Tensor?[] x", ("Tensor", True, None, False, True, None, False, None)),
    ("Tensor(a!)[] x", ("Tensor", True, None, False, False, "a", True, None)),
    ("int[] x", ("int", True, None, False, False, None, False, None)),
    ("int[2] x", ("int", True, 2, False, False, None, False, None)),
    ("int[1]? x", ("int", True, 1, True, False, None, False, None)),
    ("SymInt[]? x", ("SymInt", True, None, True, False, None, False, None)),
    ("ScalarType? x", ("ScalarType", False, None, True, False, None, False, None)),
    ("bool[3] x", ("bool", True, 3, False, False, None, False, None)),
]


@pytest.mark.parametrize("text, fields", ARGUMENT_FIELDS)
def test_argument_fields(text, fields):
    a = parse_schema(f"f({text}) -> Tensor").arguments[0]
    assert (a.type, a.is_list, a.list_len, a.optional, a.elem_optional, a.alias, a.is_write,
            a.alias_after) == fields
    assert str(a) == text


DEFAULTS = [
    ("int x=-1", -1), ("SymInt x=3", 3), ("float x=0.5", 0.5), ("float x=1", 1.0), ("float x=1e-05", 1e-05),
    ("bool x=True", True), ("bool x=False", False), ("Scalar x=1", 1), ("Scalar x=2.5", 2.5),
    ("Scalar x=True", True), ("Scalar? x=None", None), ("Tensor? x=None", None), ('str x="mean"', "mean"),
    ("str x='mean'", "mean"), ("str? x=None", None), ("int[] x=[]", ()), ("int[] x=[0, 1]", (0, 1)),
    ("int[2] x=1", (1, 1)), ("int[1]? x=None", None), ("ScalarType? x=None", None), ("ScalarType x=long", "long"),
    ("MemoryFormat x=contiguous_format", "contiguous_format"), ("float[] x=[0.5, 1]", (0.5, 1.0)),
]


@pytest.mark.parametrize("text, value", DEFAULTS)
def test_default_values(text, value):
    a = parse_schema(f"f({text}) -> Tensor").arguments[0]
    assert a.has_default and a.default == value and type(a.default) is type(value)


def test_keyword_only_arguments_and_returns():
    s = parse_schema("aten::sort.values(Tensor self, int dim=-1, bool descending=False, *, Tensor(a!) values, "
                     "Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)")
    assert (s.namespace, s.name, s.overload, s.full_name) == ("aten", "sort", "values", "sort.values")
    assert [a.kwarg_only for a in s.arguments] == [False, False, False, True, True]
    assert [(r.name, r.alias, r.is_write) for r in s.returns] == [("values", "a", True), ("indices", "b", True)]
    assert s.is_mutable and not s.is_view
    view = parse_schema("view(Tensor(a) self, SymInt[] size) -> Tensor(a)")
    assert view.is_view and not view.is_mutable
    assert parse_schema("f(Tensor x) -> ()").returns == []


BAD = [
    ("f(Tensor x)", "expected '\\(args\\) -> returns'"),
    ("f(Tensor x) ->", "expected '\\(args\\) -> returns'"),
    ("(Tensor x) -> Tensor", "expected 'name.overload"),
    ("f.a.b(Tensor x) -> Tensor", "expected 'name.overload"),
    ("f(Foo x) -> Tensor", "unknown type 'Foo'"),
    ("f(Tensor) -> Tensor", "has no name"),
    ("f(Tensor x, Tensor x) -> Tensor", "duplicate argument name 'x'"),
    ("f(int x=1, Tensor y) -> Tensor", "non-default argument 'y' follows a default argument"),
    ("f(Tensor(a!!) x) -> Tensor", "cannot parse argument"),
    ("f(Tensor(A) x) -> Tensor", "cannot parse argument"),
    ("f(int[2 x) -> Tensor", "unbalanced"),
    ("f(Tensor x, *, *, int y) -> Tensor", "'\\*' appears twice"),
    ("f(Tensor x,, Tensor y) -> Tensor", "empty argument"),
    ("f(int x=abc) -> Tensor", "invalid int default 'abc'"),
    ("f(int x=1.5) -> Tensor", "invalid int default '1.5'"),
    ("f(bool x=1) -> Tensor", "invalid bool default '1'"),
    ("f(float x=inf) -> Tensor", "invalid numeric default 'inf'"),
    ("f(str x=mean) -> Tensor", "invalid str default 'mean'"),
    ("f(int x=None) -> Tensor", "default None for the non-optional argument"),
    ("f(Tensor x=1) -> Tensor", "a Tensor argument can only default to None"),
    ("f(int[] x=3) -> Tensor", "invalid list default '3'"),
    ("f(Tensor x) -> Tensor y=1", "a return cannot have a default"),
    ("f(Tensor x) -> Foo", "unknown type 'Foo'"),
    ("1f(Tensor x) -> Tensor", "expected 'name.overload"),
]


@pytest.mark.parametrize("text, message", BAD)
def test_bad_schemas_raise_schema_error(text, message):
    with pytest.raises(SchemaError, match=message):
        parse_schema(text)


# -- property: any well-formed schema prints back as written ----------------------------
_names = st.sampled_from(["x", "other", "dim", "alpha", "out", "self", "k", "eps"])
_plain = st.sampled_from([
    ("Tensor", None), ("Tensor?", "None"), ("int", "-1"), ("int", "3"), ("SymInt", "0"), ("float", "0.5"),
    ("bool", "True"), ("bool", "False"), ("Scalar", "1"), ("Scalar?", "None"), ("str", '"sum"'),
    ("int[]", "[0, 1]"), ("int[]", "[]"), ("int[2]", "1"), ("int[1]?", "None"), ("ScalarType?", "None"),
    ("Tensor[]", None), ("Tensor?[]", None), ("Tensor(a)", None), ("Tensor(a!)", None), ("Device?", "None"),
])


@st.composite
def schemas(draw):
    names = draw(st.lists(_names, unique=True, max_size=6))
    n_kw = draw(st.integers(0, len(names)))
    args, seen_default = [], False
    for i, name in enumerate(names):
        typ, default = draw(_plain)
        kw = i >= len(names) - n_kw
        use_default = default is not None and (draw(st.booleans()) or (seen_default and not kw))
        if seen_default and not kw and not use_default:
            typ, default, use_default = "int", "0", True
        if not kw:
            seen_default = seen_default or use_default
        text = f"{typ} {name}" + (f"={default}" if use_default else "")
        if kw and "*" not in args:
            args.append("*")
        args.append(text)
    rets = draw(st.sampled_from(["Tensor", "()", "(Tensor a, Tensor b)", "Tensor(a)[]", "(Tensor, Tensor)"]))
    overload = draw(st.sampled_from(["", ".Tensor", ".out"]))
    return f"op{overload}({', '.join(args)}) -> {rets}"


@given(schemas())
def test_any_canonical_schema_round_trips(text):
    s = parse_schema(text)
    assert str(s) == text
    assert str(parse_schema(str(s))) == text


# -- calls checked against the schema ------------------------------------------------------
CHECK_SCHEMA = ("check(Tensor self, int n, float f, bool b, ScalarType? dtype, *, Scalar alpha=1, "
                "int[2] pair=1, int[] dims=[], Device? device=None) -> Tensor")


@pytest.fixture
def check_op(testdev, make_library):
    """An op whose CompositeExplicitAutograd kernel returns the arguments it received."""
    lib = make_library("toytest", "DEF")
    op = lib.define(CHECK_SCHEMA)
    lib.impl("check", lambda *args: args[1:], "CompositeExplicitAutograd")
    return op


@pytest.fixture
def x(testdev):
    return tp.tensor([1.0], device="testdev")


@pytest.mark.parametrize("args, kwargs, received", [
    ((3, 0.5, True, None), {}, (3, 0.5, True, None, 1, (1, 1), (), None)),
    ((np.int64(3), np.float32(0.5), np.bool_(False), tp.float16), {"alpha": 2.5},
     (3, 0.5, False, tp.float16, 2.5, (1, 1), (), None)),
    ((3, 2, True, None), {"pair": [4, 5], "dims": [0, 1], "device": "testdev"},
     (3, 2, True, None, 1, (4, 5), (0, 1), tp.device("testdev"))),
    ((3, 0.5, True, None), {"pair": 7, "alpha": np.int32(4)}, (3, 0.5, True, None, 4, (7, 7), (), None)),
])
def test_arguments_are_coerced_for_the_kernel(check_op, x, args, kwargs, received):
    out = check_op(x, *args, **kwargs)
    assert out == received
    assert [type(v) for v in out[:5]] == [type(v) for v in received[:5]]


@pytest.mark.parametrize("args, kwargs, exc, message", [
    (("a", 1, 0.5, True, None), {}, TypeError,
     r"check\(\): argument 'self' \(position 1\) must be Tensor, not str"),
    ((None, 1, 0.5, True, None), {}, TypeError,
     r"check\(\): argument 'self' \(position 1\) must be Tensor, not NoneType"),
    ((1.5, 0.5, True, None), {}, TypeError, r"check\(\): argument 'n' \(position 2\) must be int, not float"),
    ((1, "a", True, None), {}, TypeError, r"check\(\): argument 'f' \(position 3\) must be float, not str"),
    ((1, 0.5, 1, None), {}, TypeError, r"check\(\): argument 'b' \(position 4\) must be bool, not int"),
    ((1, 0.5, True, "float32"), {}, TypeError,
     r"check\(\): argument 'dtype' \(position 5\) must be tensorplug.dtype, not str"),
    ((1, 0.5, True, None), {"alpha": "a"}, TypeError, r"check\(\): argument 'alpha' must be Number, not str"),
    ((1, 0.5, True, None), {"pair": "ab"}, TypeError,
     r"check\(\): argument 'pair' must be tuple of ints, not str"),
    ((1, 0.5, True, None), {"pair": [1, 2, 3]}, RuntimeError,
     r"check\(\): argument 'pair' expected 2 values, got 3"),
    ((1, 0.5, True, None), {"device": 1.5}, TypeError, r"check\(\): argument 'device' must be device, not float"),
    ((1, 0.5, True, None, 1), {}, TypeError, r"check\(\) takes 5 positional arguments but 6 were given"),
    ((1, 0.5, True, None), {"beta": 1}, TypeError, r"check\(\) got an unexpected keyword argument 'beta'"),
    ((1, 0.5, True), {}, TypeError, r"check\(\) missing 1 required positional argument: 'dtype'"),
])
def test_bad_calls_raise_like_pytorch(check_op, x, args, kwargs, exc, message):
    if args and args[0] in ("a", None):
        call_args = args
    else:
        call_args = (x,) + args
    with pytest.raises(exc, match=message):
        check_op(*call_args, **kwargs)


@pytest.mark.parametrize("call, message", [
    (lambda x: tp.ops.tensorplug.add.Tensor(x, "a"), r"add\.Tensor\(\): argument 'other' \(position 2\) must "
                                                     r"be Tensor, not str"),
    (lambda x: tp.ops.tensorplug.add.Tensor(x, x, 2), r"add\.Tensor\(\) takes 2 positional arguments but 3 "
                                                      r"were given"),
    (lambda x: tp.ops.tensorplug.add.Tensor(x, x, alpha="s"), r"add\.Tensor\(\): argument 'alpha' must be "
                                                              r"Number, not str"),
    (lambda x: tp.ops.tensorplug.add.Tensor("a", x), r"add\.Tensor\(\): argument 'self' \(position 1\) must be "
                                                     r"Tensor, not str"),
])
def test_core_op_errors(x, call, message):
    with pytest.raises(TypeError, match=message):
        call(x)


@pytest.mark.parametrize("tensors, message", [
    (lambda x: [x, 1], "^expected Tensor as element 1 in argument 0, but got int$"),
    (lambda x: (x, x, "a"), "^expected Tensor as element 2 in argument 0, but got str$"),
    (lambda x: x, r"^cat\(\): argument 'tensors' \(position 1\) must be tuple of Tensors, not Tensor$"),
    (lambda x: 3, r"^cat\(\): argument 'tensors' \(position 1\) must be tuple of Tensors, not int$"),
])
def test_tensor_list_errors(x, tensors, message):
    with pytest.raises(TypeError, match=message):
        tp.ops.tensorplug.cat.default(tensors(x))


def test_keyword_only_arguments_cannot_be_passed_positionally_but_positional_entry_takes_all(check_op, x):
    with pytest.raises(TypeError, match="takes 5 positional arguments but 6 were given"):
        check_op(x, 1, 0.5, True, None, 2)
    assert check_op.positional(x, 1, 0.5, True, None, 2, (3, 4), (), None) == (1, 0.5, True, None, 2, (3, 4), (),
                                                                              None)


def test_scalar_type_default_names_become_dtypes(testdev, make_library, x):
    lib = make_library("toytest", "DEF")
    op = lib.define("dt(Tensor self, ScalarType dtype=long) -> Tensor")
    lib.impl("dt", lambda self, dtype: dtype, "CompositeExplicitAutograd")
    assert op(x) is tp.int64
