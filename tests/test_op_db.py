"""The op database itself: it covers every public op, its references are right (the CPU backend
matches them), its error inputs raise what they declare, its gradient samples are smooth, and its
sample helpers make what they promise."""

from __future__ import annotations

import itertools
import math
import re
import warnings

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import Tensor, _privateuse1
from tensorplug.autograd import gradcheck
from tensorplug.ops._lib import PUBLIC
from tensorplug.testing import op_db as DB
from tensorplug.testing import samples as S

ENTRIES = DB.op_db()
NOT_RANDOM = [e for e in ENTRIES if not e.random]

# Public functions and Tensor methods that are not ops of the database, and why.
NOT_OPS = {
    # factories without a tensor input (tests/test_factories.py, tests/test_random.py); their
    # kernels are the entries of rand_like, randn_like, randint_like
    "rand", "randn", "randint", "randperm", "logspace",
    # the random generators and their state
    "Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state",
    # metadata
    "dim", "ndimension", "element_size", "is_complex", "is_contiguous", "is_floating_point", "nelement", "numel",
    "size", "stride", "storage_offset", "untyped_storage", "data_ptr",
    # host transfers and devices (the conformance suite's round trips)
    "item", "tolist", "numpy", "cpu",
    # CUDA moves and pinned host memory (tensorplug-cuda's tests, simulated in make test)
    "cuda", "pin_memory", "is_pinned",
    # the type name string (type(dtype) converts like .to, an entry)
    "type",
    # quantized tensors' accessors: a plain tensor's raise or (dequantize) return it; the
    # tensorplug-quantize plugin's tests and conformance cover the quantized ones
    "int_repr", "dequantize", "q_scale", "q_zero_point", "q_per_channel_scales", "q_per_channel_zero_points",
    "q_per_channel_axis", "qscheme",
    # autograd plumbing (tests/test_autograd.py)
    "backward", "register_hook", "register_post_accumulate_grad_hook", "retain_grad", "requires_grad_", "detach_",
}


# tensorplug.nn.functional functions without an "nn.functional.<name>" entry yet: their tensor-op
# counterparts (relu, softmax, one_hot, tanh, ...) are entries; the functional wrappers (inplace=, dim=None)
# and the remaining layers and losses are still to be added.
NN_FUNCTIONAL_PENDING = {
    "bilinear", "one_hot", "normalize", "relu", "relu_", "relu6", "elu", "leaky_relu", "gelu", "silu",
    "mish", "softplus", "hardtanh", "tanh", "sigmoid", "softmax", "softmin", "log_softmax",
    "smooth_l1_loss",
}


def _public_names():
    methods = {n for n, v in vars(Tensor).items() if not n.startswith("_") and callable(v)}
    # Tensor.<name>() of a backend on the PrivateUse1 slot is a device transfer like cpu()
    methods.discard(_privateuse1.renamed())
    return set(PUBLIC) | methods


def _public_fns(name):
    return [f for f in (PUBLIC.get(name), getattr(Tensor, name, None)) if f is not None]


# -- coverage -----------------------------------------------------------------------------------------------
def test_every_public_op_has_an_entry():
    names = set(DB.ALIASES)
    fns = set()
    for e in ENTRIES:
        names.update((e.name, e.name.partition(".")[0]))
        fns.update(id(f) for f in (e.op, e.inplace) if f is not None)
    missing = sorted(n for n in _public_names() - NOT_OPS
                     if n not in names and not any(id(f) in fns for f in _public_fns(n)))
    assert not missing, f"public ops without an OpInfo: {missing}"


def test_every_nn_functional_op_has_an_entry():
    from tensorplug.nn import functional as F
    names = {e.name.split(".")[2] for e in ENTRIES if e.name.startswith("nn.functional.")}
    for e in ENTRIES:
        if e.name.startswith("nn.functional."):
            assert e.op is getattr(F, e.name.split(".")[2]) or e.name.count(".") > 2, e.name
    missing = sorted(set(F.__all__) - names - NN_FUNCTIONAL_PENDING)
    assert not missing, f"nn.functional ops without an OpInfo: {missing}"
    stale = sorted(NN_FUNCTIONAL_PENDING & names | NN_FUNCTIONAL_PENDING - set(F.__all__))
    assert not stale, f"NN_FUNCTIONAL_PENDING names covered or unknown functions: {stale}"


def test_exclusions_name_public_things():
    stale = sorted(NOT_OPS - _public_names())
    assert not stale, f"NOT_OPS names nothing public: {stale}"


@pytest.mark.parametrize("alias", sorted(DB.ALIASES))
def test_alias_is_its_entrys_op(alias):
    info = DB.get_opinfo(alias)
    fns = _public_fns(alias)
    assert fns, f"{alias} is neither a public function nor a Tensor method"
    for fn in fns:
        if fn is info.op or fn is info.inplace:
            continue
        # another function object (tensorplug.concat): it must agree with the entry on every sample
        for s in info.sample_inputs("cpu", tp.float32, False):
            _assert_matches(fn(s.input, *s.args, **s.kwargs), _np(info.op(s.input, *s.args, **s.kwargs)), None,
                            f"{alias} vs {info.name}, sample {s.name}")


def test_get_opinfo():
    assert DB.get_opinfo("add").op is tp.add
    assert DB.get_opinfo("arccos") is DB.get_opinfo("acos")
    with pytest.raises(KeyError, match="no OpInfo named 'nope'"):
        DB.get_opinfo("nope")


def test_entries_are_well_formed():
    names = [e.name for e in ENTRIES]
    assert len(names) == len(set(names)), "duplicate entry names"
    for e in ENTRIES:
        assert e.dtypes and set(e.dtypes) <= set(S.ALL + S.COMPLEX), e.name
        assert (e.ref is None) == e.random, f"{e.name}: a reference unless random"
        assert callable(e.op) and (e.inplace is None or callable(e.inplace)), e.name
        assert e.name not in DB.ALIASES, f"{e.name} is both an entry and an alias"


@pytest.mark.parametrize("info", ENTRIES, ids=lambda e: e.name)
def test_samples_for_every_dtype(info):
    for dtype in info.dtypes:
        got = list(info.sample_inputs("cpu", dtype, False))
        assert got, f"{info.name}: no samples in {dtype}"
        for s in got:
            for t in S.tensors_of((s.input, s.args, s.kwargs)):
                assert t.device.type == "cpu" and not t.requires_grad, f"{info.name} {s.name}"


# -- references ------------------------------------------------------------------------------------------
def _np(x):
    if isinstance(x, Tensor):
        return x.detach().numpy()
    if isinstance(x, (list, tuple)):
        return [_np(v) for v in x]
    return x


def _flat(x):
    if isinstance(x, (list, tuple)):
        return [y for v in x for y in _flat(v)]
    return [x]


def _assert_matches(actual, expected, info, what):
    """``actual`` (tensors, also in tuples and lists) equals ``expected`` (numpy): dtype, shape and values
    within the result dtype's tolerance (or the entry's own)."""
    got, want = _flat(_np(actual)), _flat(expected)
    assert len(got) == len(want), f"{what}: {len(got)} results, expected {len(want)}"
    for a, e in zip(got, want):
        if not isinstance(e, np.ndarray):
            assert a == e, f"{what}: {a!r} != {e!r}"
            continue
        assert a.dtype == e.dtype, f"{what}: dtype {a.dtype}, expected {e.dtype}"
        assert a.shape == e.shape, f"{what}: shape {a.shape}, expected {e.shape}"
        if S.is_float(e.dtype) or e.dtype.kind == "c":
            atol, rtol = S.default_tolerance(e.dtype)
            if info is not None and info.atol is not None:
                atol, rtol = max(atol, info.atol), max(rtol, info.rtol or 0.0)
            wide = np.complex128 if e.dtype.kind == "c" else np.float64
            x, y = a.astype(wide), e.astype(wide)
            ok = np.isclose(x, y, atol=atol, rtol=rtol, equal_nan=True)
        else:
            ok = a == e
        assert np.all(ok), f"{what}: {np.size(ok) - np.count_nonzero(ok)} values differ, first at " \
                           f"{np.argwhere(~np.asarray(ok))[0].tolist()}: {a[~ok][0]!r} vs {e[~ok][0]!r}"


@pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0:UserWarning")  # PyTorch warns alike
@pytest.mark.parametrize("info", NOT_RANDOM, ids=lambda e: e.name)
def test_cpu_matches_reference(info):
    """Every sample of every supported dtype (float64 and float32 included) gives the reference's result,
    silently: PyTorch makes inf and NaN without numpy's RuntimeWarnings."""
    for dtype in info.dtypes:
        for s in info.sample_inputs("cpu", dtype, False):
            expected = S.reference_call(info, s)
            with warnings.catch_warnings():
                warnings.simplefilter("error", RuntimeWarning)
                got = info.op(s.input, *s.args, **s.kwargs)
            _assert_matches(got, expected, info, f"{info.name} in {dtype.name}, sample {s.name}")


@pytest.mark.parametrize("info", [e for e in NOT_RANDOM if e.inplace is not None], ids=lambda e: e.name)
def test_inplace_matches_reference(info):
    """Where the result fits the input (same dtype and shape), the in-place form writes it and returns self."""
    done = 0
    for dtype in info.dtypes:
        for s in info.sample_inputs("cpu", dtype, False):
            expected = S.reference_call(info, s)
            x = s.input
            if not isinstance(expected, np.ndarray) or expected.dtype != S.np_dtype(x.dtype) or \
                    expected.shape != tuple(x.shape):
                continue
            x = x.clone()
            assert info.inplace(x, *s.args, **s.kwargs) is x
            _assert_matches(x, expected, info, f"{info.name} in place in {dtype.name}, sample {s.name}")
            done += 1
    assert done, f"{info.name}: no sample exercises the in-place form"


# -- error inputs ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("info", [e for e in ENTRIES if e.error_inputs is not None], ids=lambda e: e.name)
def test_error_inputs_raise_as_declared(info):
    errors = list(info.error_inputs("cpu"))
    assert errors, f"{info.name}: error_inputs yields nothing"
    for ei in errors:
        s = ei.sample
        with pytest.raises(ei.error_type) as got:
            info.op(s.input, *s.args, **s.kwargs)
        assert re.search(ei.error_regex, str(got.value)), f"{info.name}: {got.value!r} !~ {ei.error_regex!r}"


# -- gradient samples ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("info", [e for e in NOT_RANDOM if e.supports_autograd and tp.float64 in e.dtypes],
                         ids=lambda e: e.name)
def test_gradient_samples_pass_gradcheck(info):
    """With ``requires_grad`` the samples are small, finite and smooth: float64 gradcheck passes on all."""
    got = list(info.sample_inputs("cpu", tp.float64, True))
    assert got, f"{info.name}: no gradient samples"
    for s in got:
        leaves = [t for t in S.tensors_of((s.input, s.args, s.kwargs)) if t.requires_grad]
        assert all(t.is_leaf for t in leaves), f"{info.name} {s.name}: a gradient input is not a leaf"
        assert sum(t.numel() for t in leaves) <= S.GRAD_SAMPLE_MAX_NUMEL
        if not leaves:
            continue
        assert all(np.isfinite(t.detach().numpy()).all() for t in leaves), f"{info.name} {s.name}"

        def fn(*_, s=s):
            out = info.op(s.input, *s.args, **s.kwargs)
            return tuple(out) if isinstance(out, (list, tuple)) else out
        assert gradcheck(fn, tuple(leaves)), f"{info.name} {s.name}"


# -- random ops -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("info", [e for e in ENTRIES if e.random], ids=lambda e: e.name)
def test_random_samples_are_reproducible(info):
    for dtype in info.dtypes:
        for s in info.sample_inputs("cpu", dtype, False):
            runs = []
            for _ in range(2):
                tp.manual_seed(7)
                runs.append(info.op(s.input, *s.args, **s.kwargs))
            assert isinstance(runs[0], Tensor)
            np.testing.assert_array_equal(runs[0].numpy(), runs[1].numpy())
            if info.name != "multinomial":
                assert runs[0].shape == s.input.shape and runs[0].dtype == s.input.dtype, info.name


# -- sample helpers ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", S.ALL, ids=str)
def test_make_tensor_layouts_and_values(dtype):
    plain = S.make_tensor((3, 5), dtype, seed=3)
    assert plain.shape == (3, 5) and plain.dtype is dtype and plain.is_contiguous()
    np.testing.assert_array_equal(plain.numpy(), S.make_tensor((3, 5), dtype, seed=3).numpy())
    stepped = S.make_tensor((3, 5), dtype, seed=3, noncontiguous=True)
    assert not stepped.is_contiguous() and stepped.stride() == (11, 2)
    np.testing.assert_array_equal(stepped.numpy(), plain.numpy())
    both = S.make_tensor((2, 3, 4), dtype, seed=1, transposed=True, noncontiguous=True)
    assert both.shape == (2, 3, 4) and both.stride()[0] < both.stride()[2]
    v = S.make_tensor((200,), dtype, low=-4, high=4).numpy().astype(np.float64)
    lo = 0 if dtype in (tp.bool, tp.uint8) else -4
    assert v.min() >= lo and v.max() <= 4
    nz = S.make_tensor((200,), dtype, exclude_zero=True).numpy().astype(np.float64)
    assert np.all(np.abs(nz) >= (0.5 if dtype.is_floating_point else 1)) or dtype is tp.bool


def test_make_tensor_requires_grad_gives_leaves():
    for kw in ({}, {"noncontiguous": True}, {"transposed": True}):
        t = S.make_tensor((3, 4), tp.float64, requires_grad=True, **kw)
        assert t.requires_grad and t.is_leaf
    assert not S.make_tensor((3,), tp.int64, requires_grad=True).requires_grad


def test_special_values():
    v = S.special_tensor(tp.float32).numpy()
    assert np.isinf(v).sum() == 2 and np.isnan(v).sum() == 1
    assert any(x == 0 and math.copysign(1, x) < 0 for x in v.tolist())
    a, b = S.special_pair(tp.bfloat16)
    assert a.shape == (7, 1) and b.shape == (7,) and a.dtype is tp.bfloat16


def test_default_tolerance():
    assert S.default_tolerance(tp.int32) == (0.0, 0.0) == S.default_tolerance(np.dtype(np.bool_))
    assert S.default_tolerance(tp.bfloat16) == S.default_tolerance(S.BF16)
    tols = [S.default_tolerance(d)[1] for d in (tp.float64, tp.float32, tp.float16, tp.bfloat16)]
    assert tols == sorted(tols)


_PROMOTION_OPERANDS = [
    # (numpy operand for samples.result_dtype, the same operand for tensorplug.result_type)
    *[(np.zeros((2,), S.np_dtype(d)), tp.zeros(2, dtype=d)) for d in S.ALL],
    *[(np.zeros((), S.np_dtype(d)), tp.zeros((), dtype=d)) for d in (tp.bool, tp.uint8, tp.int8, tp.float16,
                                                                      tp.bfloat16, tp.float64)],
    (True, True), (3, 3), (-2.5, -2.5),
]


@pytest.mark.parametrize("a,b", list(itertools.combinations_with_replacement(range(len(_PROMOTION_OPERANDS)), 2)))
def test_result_dtype_agrees_with_the_core(a, b):
    (na, ta), (nb, tb) = _PROMOTION_OPERANDS[a], _PROMOTION_OPERANDS[b]
    assert S.result_dtype(na, nb) == S.np_dtype(tp.result_type(ta, tb))


def test_result_dtype_agrees_with_torch():
    torch = pytest.importorskip("torch")

    def to_torch(x):
        if isinstance(x, np.ndarray):
            return torch.zeros(x.shape, dtype=getattr(torch, "bfloat16" if x.dtype == S.BF16 else x.dtype.name))
        return x
    for (na, _), (nb, _) in itertools.combinations_with_replacement(_PROMOTION_OPERANDS, 2):
        if not isinstance(na, np.ndarray) and not isinstance(nb, np.ndarray):
            continue
        expected = str(torch.result_type(to_torch(na), to_torch(nb))).replace("torch.", "")
        assert S.result_dtype(na, nb).name == expected, (na, nb)
