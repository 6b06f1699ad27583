"""vmap: API, batched tensors, rules vs loops, composition with autograd, errors, randomness, registration."""

import threading
import warnings

import numpy as np
import pytest

import tensorplug as tp
from tensorplug.func import grad, hessian, jacrev, vjp
from tensorplug_vmap import BatchedTensor, register_batching_rule
from tensorplug_vmap.kernel import _WARNED


def close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a.detach()._host()), np.asarray(b.detach()._host()), atol=tol, rtol=tol)


def rnd(*shape):
    return tp.randn(*shape, dtype=tp.float64)


# -- in_dims / out_dims / pytrees --------------------------------------------------------------------------
@pytest.mark.parametrize("fn, in_dims, shapes, out_dims", [
    (lambda a, b: a * b + 1, (0, 0), [(4, 3), (4, 3)], 0),
    (lambda a, b: a @ b, (0, None), [(4, 3), (3, 2)], 0),
    (lambda a, b: a @ b, (None, 1), [(2, 3), (3, 4)], 0),
    (lambda a, b: a @ b, (1, 0), [(3, 4), (4, 3)], 0),
    (lambda a, b: a @ b, (1, 0), [(2, 3, 4), (3, 4, 5)], 1),
    (lambda a, b: (a + b).sum(-1), (-1, None), [(3, 4), (3,)], 0),
    (lambda a, b: a.t() @ b, (2, 0), [(3, 5, 4), (4, 3, 2)], -1),
    (lambda a: a.permute(1, 0).reshape(-1), 1, [(2, 4, 3)], 0),
])
def test_vmap_matches_loop(fn, in_dims, shapes, out_dims):
    xs = [rnd(*s) for s in shapes]
    got = tp.vmap(fn, in_dims=in_dims, out_dims=out_dims)(*xs)
    size = next(x.shape[d] for x, d in zip(xs, in_dims if isinstance(in_dims, tuple) else [in_dims]) if d is not None)
    dims = in_dims if isinstance(in_dims, tuple) else (in_dims,)
    ref = tp.stack([fn(*[x.select(d, k) if d is not None else x for x, d in zip(xs, dims)]) for k in range(size)],
                   out_dims)
    close(got, ref)


def test_pytrees_and_non_tensor_args():
    x, y, z = rnd(3, 2), rnd(2), rnd(2, 3)

    def f(pair, d, scale):
        a, b = pair
        return {"s": a * b * scale, "t": [d["z"].sum(0), d["z"]]}

    out = tp.vmap(f, in_dims=((0, None), {"z": 1}, None), out_dims={"s": 0, "t": [0, 1]})((x, y), {"z": z}, 2.0)
    close(out["s"], x * y * 2)
    close(out["t"][0], z.sum(0))
    close(out["t"][1], z)


def test_unbatched_output_is_expanded_and_out_dims_none():
    x, w = rnd(4, 3), rnd(3)
    a, b = tp.vmap(lambda x, w: (x * 0 + 1, w * 2), in_dims=(0, None), out_dims=(0, None))(x, w)
    close(b, w * 2)
    assert a.shape == (4, 3)
    c = tp.vmap(lambda x, w: w * 2, in_dims=(0, None))(x, w)
    close(c, (w * 2).expand(4, 3))


def test_chunk_size_gives_the_same_result():
    x = rnd(7, 3)
    close(tp.vmap(lambda a: a.exp().sum(), chunk_size=3)(x), x.exp().sum(1))


def test_batched_tensor_looks_like_one_example():
    seen = {}

    def f(a):
        seen.update(shape=a.shape, dim=a.dim(), size=a.size(1), repr=repr(a), cls=type(a))
        return a

    tp.vmap(f, in_dims=1)(tp.ones(2, 3, 4))
    assert seen["shape"] == (2, 4) and seen["dim"] == 2 and seen["size"] == 4
    assert seen["cls"] is BatchedTensor
    assert seen["repr"].startswith("BatchedTensor(lvl=1, bdim=1, value=\n    tensor(")


def test_repr_of_a_half_constructed_batched_tensor_does_not_raise():
    b = object.__new__(BatchedTensor)
    assert repr(b) == f"{b}" == f"<tensorplug_vmap.batched.BatchedTensor object at {id(b):#x} (uninitialized)>"


@pytest.mark.parametrize("what, call, match", [
    ("item", lambda a: a.sum().item(), r"calling \.item\(\)"),
    ("bool", lambda a: bool(a.sum() > 0), "data-dependent control flow"),
    ("numpy", lambda a: a.numpy(), r"numpy\(\) is not available for a batched tensor"),
    ("data", lambda a: a._data, r"_data\) is not available"),
    ("tolist", lambda a: a.tolist(), r"tolist\(\) is not available"),
])
def test_data_access_inside_vmap_raises(what, call, match):
    with pytest.raises(RuntimeError, match=match):
        tp.vmap(call)(rnd(3, 2))


def test_stride_and_contiguity_are_logical():
    def f(a):
        assert a.stride() == (1,)
        assert a.is_contiguous()
        return a
    tp.vmap(f)(rnd(3, 4))

    def g(a):
        assert a.stride() == (3,)
        assert not a.is_contiguous()
        return a
    tp.vmap(g, in_dims=1)(rnd(4, 3))


# -- nesting --------------------------------------------------------------------------------------------------
def test_nested_three_levels():
    x = rnd(2, 3, 4, 5)
    f = lambda a: (a.sin() * a.sum()).cumsum(0)  # noqa: E731
    got = tp.vmap(tp.vmap(tp.vmap(f, in_dims=1), in_dims=0), in_dims=2)(x)
    # outer: dim 2 of x (k); middle: dim 0 (i); inner: dim 1 of what is left, x's last dim (m)
    ref = tp.stack([tp.stack([tp.stack([f(x[i, :, k, m]) for m in range(5)]) for i in range(2)])
                    for k in range(4)])
    close(got, ref)


def test_nested_mixed_levels_broadcast():
    x, y = rnd(2, 3), rnd(4, 3)
    got = tp.vmap(lambda a: tp.vmap(lambda b: a * b - a.sum())(y))(x)
    ref = tp.stack([tp.stack([x[i] * y[j] - x[i].sum() for j in range(4)]) for i in range(2)])
    close(got, ref)


# -- autograd ------------------------------------------------------------------------------------------------
def _mlp_loss(w1, b1, w2, x, t):
    h = (x @ w1.t() + b1).tanh()
    return ((h @ w2.t()) - t).pow(2).sum()


def test_per_sample_gradients_match_loop_of_grad():
    params = (rnd(5, 3), rnd(5), rnd(2, 5))
    x, t = rnd(6, 3), rnd(6, 2)
    got = tp.vmap(grad(_mlp_loss, argnums=(0, 1, 2)), in_dims=(None, None, None, 0, 0))(*params, x, t)
    for k in range(6):
        leaves = [p.detach().requires_grad_() for p in params]
        ref = tp.autograd.grad(_mlp_loss(*leaves, x[k], t[k]), leaves)
        for j in range(3):
            close(got[j][k], ref[j])


def test_grad_of_vmap_and_backward_through_vmap():
    w = rnd(3, 4).requires_grad_()
    x = rnd(5, 4)
    out = tp.vmap(lambda xi: (w @ xi).sin().sum())(x)
    out.sum().backward()
    w2 = w.detach().requires_grad_()
    sum((w2 @ x[k]).sin().sum() for k in range(5)).backward()
    close(w.grad, w2.grad)
    g = grad(lambda w: tp.vmap(lambda xi: (w @ xi).sin().sum())(x).sum())(w.detach())
    close(g, w2.grad)


def test_grad_of_vmap_of_grad():
    x = rnd(4)
    f = lambda a: (a.sin() * a).sum()  # noqa: E731
    got = grad(lambda x: tp.vmap(grad(f))(x.unsqueeze(1).expand(4, 3) * 1.0).sum())(x)
    # d/dx sum_k 3 * f'(x) = 3 * f''(x) elementwise, f'' = 2 cos x - x sin x
    close(got, 3 * (2 * x.cos() - x * x.sin()))


def test_jacrev_and_hessian_match_loops_of_autograd_grad():
    x = rnd(4)
    f = lambda x: x.sin() * x.sum()  # noqa: E731
    xr = x.detach().requires_grad_()
    y = f(xr)
    rows = [tp.autograd.grad(y[i], xr, retain_graph=True)[0] for i in range(4)]
    close(jacrev(f)(x), tp.stack(rows))
    s = lambda x: (x.exp() * x.sum()).sum()  # noqa: E731
    xr = x.detach().requires_grad_()
    (g,) = tp.autograd.grad(s(xr), xr, create_graph=True)
    hrows = [tp.autograd.grad(g[i], xr, retain_graph=True)[0] for i in range(4)]
    close(hessian(s)(x), tp.stack(hrows))


def test_vmap_of_vjp():
    x = rnd(3)
    out, fn = vjp(lambda a: a.exp(), x)
    got = tp.vmap(fn)(tp.eye(3, dtype=tp.float64))[0]
    close(got, tp.diag_embed(x.exp()) if hasattr(tp, "diag_embed") else tp.eye(3, dtype=tp.float64) * x.exp())


# -- in-place, fallback, randomness ---------------------------------------------------------------------------
@pytest.mark.parametrize("op, match", [
    (lambda a, b: a.mul_(b), r"vmap: inplace arithmetic\(self, \*extra_args\) is not possible"),
    (lambda a, b: a.copy_(b), r"vmap: inplace arithmetic\(self, \*extra_args\) is not possible"),
    (lambda a, b: a.clamp_(b), r"vmap: tensorplug::clamp_.Tensor\(self, \*extra_args\) is not possible"),
])
def test_inplace_into_unbatched_raises(op, match):
    with pytest.raises(RuntimeError, match=match):
        tp.vmap(op, in_dims=(None, 0))(tp.zeros(3, dtype=tp.float64), rnd(2, 3))


def test_inplace_into_batched_and_like_factories():
    x = rnd(4, 3)

    def f(a):
        out = tp.zeros_like(a)
        out.add_(a).mul_(2)
        return out
    close(tp.vmap(f)(x), x * 2)


def test_fallback_loops_and_warns_once():
    lib = tp.library.Library("vmaptest", "DEF")
    lib.define("twice(Tensor self) -> Tensor")
    lib.impl("twice", lambda t: t * 2, "CompositeExplicitAutograd")
    op = tp.dispatch.dispatcher.lookup_op("vmaptest::twice")
    x = rnd(3, 2)
    _WARNED.discard(op.qualname)
    with pytest.warns(UserWarning, match="There is a performance drop because we have not yet implemented the "
                                         "batching rule for vmaptest::twice"):
        close(tp.vmap(op)(x), x * 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        close(tp.vmap(op)(x), x * 2)
    lib._destroy()


def test_an_op_tagged_pointwise_gets_the_elementwise_rule_from_its_tag():
    lib = tp.library.Library("vmaptags", "DEF")
    lib.define("scale(Tensor self, float k) -> Tensor", tags=(tp.Tag.pointwise,))
    lib.define("plus(Tensor self, Tensor other) -> Tensor", tags=(tp.Tag.pointwise,))
    lib.define("plus_(Tensor(a!) self, Tensor other) -> Tensor(a!)", tags=(tp.Tag.pointwise,))
    calls = []

    def plus(a, b):
        calls.append(tuple(a.shape))
        return a + b
    lib.impl("scale", lambda t, k: t * k, "CompositeExplicitAutograd")
    lib.impl("plus", plus, "CompositeExplicitAutograd")
    lib.impl("plus_", lambda a, b: a.add_(b), "CompositeExplicitAutograd")
    ops = tp.ops.vmaptags
    x, y = rnd(4, 3), rnd(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no slow-path warning: each op has a rule
        close(tp.vmap(lambda t: ops.scale(t, 3.0))(x), x * 3)
        close(tp.vmap(ops.plus, in_dims=(0, None))(x, y), x + y)
        # one call on the whole batch (broadcast), not one per example
        assert calls == [(4, 3)]
        z = x.clone()
        tp.vmap(ops.plus_)(z, x)
        close(z, x * 2)
        with pytest.raises(RuntimeError, match="vmap"):  # in place into an unbatched self, as in PyTorch
            tp.vmap(ops.plus_, in_dims=(None, 0))(y.clone(), x)
    lib._destroy()


def test_the_cores_elementwise_ops_carry_the_pointwise_tag_and_others_do_not():
    assert tp.Tag.pointwise in tp.ops.tensorplug.add.Tensor.tags
    assert tp.Tag.pointwise in tp.ops.tensorplug.exp.default.tags
    assert tp.Tag.pointwise in tp.ops.tensorplug.mul_.Tensor.tags
    assert tp.Tag.pointwise not in tp.ops.tensorplug.sum.dim_IntList.tags
    assert tp.Tag.pointwise not in tp.ops.tensorplug.matmul.default.tags


def test_registered_rule_is_used():
    lib = tp.library.Library("vmaptest2", "DEF")
    lib.define("plus1(Tensor self) -> Tensor")
    lib.impl("plus1", lambda t: t + 1, "CompositeExplicitAutograd")
    calls = []

    @register_batching_rule("vmaptest2::plus1")
    def rule(ctx, op, vals, bdims, args):
        calls.append((ctx.size, bdims[0]))
        return op.positional(vals[0]), bdims[0]

    x = rnd(2, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        close(tp.vmap(tp.dispatch.dispatcher.lookup_op("vmaptest2::plus1"), in_dims=1)(x), (x + 1).t())
    assert calls == [(5, 1)]
    lib._destroy()


def test_randomness_modes():
    x = tp.zeros(4, 3)
    with pytest.raises(RuntimeError, match="vmap: called random operation while in randomness error mode"):
        tp.vmap(lambda a: tp.rand_like(a))(x)
    diff = tp.vmap(lambda a: tp.rand_like(a), randomness="different")(x)
    same = tp.vmap(lambda a: tp.rand_like(a), randomness="same")(x)
    assert not (diff[0] == diff[1]).all().item()
    assert (same == same[0]).all().item()
    with pytest.raises(RuntimeError, match="Only allowed values for randomness are 'error', 'different', or "
                                           "'same'. Got bad"):
        tp.vmap(lambda a: a, randomness="bad")


FACTORIES = {
    "randn": lambda a: a + tp.randn(3),
    "rand": lambda a: a + tp.rand(3),
    "randint": lambda a: a + tp.randint(0, 1000, (3,)),
    "normal": lambda a: a + tp.normal(0.0, 1.0, (3,)),
    "rand_like(unbatched)": lambda a: a + tp.rand_like(tp.zeros(3)),
    "bernoulli(p)": lambda a: tp.bernoulli(a + 0.5),
    "normal(mean, std)": lambda a: tp.normal(a, tp.ones(3)),
    "randperm": lambda a: a + tp.randperm(3),
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_random_factories_follow_randomness(name):
    fn, x = FACTORIES[name], tp.zeros(6, 3, dtype=tp.int64 if name in ("randint", "randperm") else tp.float32)
    with pytest.raises(RuntimeError, match="vmap: called random operation while in randomness error mode"):
        tp.vmap(fn)(x)
    tp.manual_seed(0)
    diff = tp.vmap(fn, randomness="different")(x)
    same = tp.vmap(fn, randomness="same")(x)
    assert diff.shape == same.shape == (6, 3)
    assert not all((diff[i] == diff[0]).all().item() for i in range(1, 6))  # six examples, six draws
    assert all((same[i] == same[0]).all().item() for i in range(1, 6))
    tp.manual_seed(0)
    assert (tp.vmap(fn, randomness="different")(x) == diff).all().item()  # seeded like any draw
    if name == "randperm":
        assert all(sorted(row) == [0, 1, 2] for row in diff.tolist())


def test_random_factories_in_nested_vmap():
    inner_same = tp.vmap(tp.vmap(lambda t: t + tp.rand(()), randomness="same"), randomness="different")
    both = tp.vmap(tp.vmap(lambda t: t + tp.rand(()), randomness="different"), randomness="different")
    a, b = inner_same(tp.zeros(2, 3)), both(tp.zeros(2, 3))
    assert (a == a[:, :1]).all().item() and not (a[0] == a[1]).all().item()
    assert len(set(b.reshape(-1).tolist())) == 6
    with pytest.raises(RuntimeError, match="randomness error mode"):
        tp.vmap(tp.vmap(lambda t: t + tp.rand(()), randomness="different"))(tp.zeros(2, 3))


def test_vmap_levels_are_per_thread():
    seen = {}

    def other_thread():
        seen["plain"] = tp.randn(3)  # this thread is not inside vmap: a plain draw, no randomness error
        seen["mapped"] = tp.vmap(lambda t: t * 2)(tp.ones(2, 3))

    def f(a):
        th = threading.Thread(target=other_thread)
        th.start()
        th.join()
        return a + 1

    out = tp.vmap(f)(tp.zeros(4, 3))
    assert out.tolist() == [[1.0] * 3] * 4
    assert type(seen["plain"]) is tp.Tensor and seen["plain"].shape == (3,)
    assert type(seen["mapped"]) is tp.Tensor and seen["mapped"].tolist() == [[2.0] * 3] * 2


def _loop(f, args, dims, n):
    return tp.stack([f(*[a.select(d, b) if d is not None else a for a, d in zip(args, dims)]) for b in range(n)])


def _put(s, i, v):
    s = s.clone()
    s.index_put_((i,), v)
    return s


def _put_acc(s, i, j, v):
    s = s.clone()
    s.index_put_((i, j), v, accumulate=True)
    return s


@pytest.mark.parametrize("fn, shapes, dims", [
    (_put, [(4, 5, 3), (4, 2), (4, 2, 3)], (0, 0, 0)),
    (_put, [(4, 5, 3), (2,), (4, 2, 3)], (0, None, 0)),
    (_put, [(4, 5, 3), (4, 2), (3,)], (0, 0, None)),
    (_put, [(5, 4, 3), (4, 2), (2, 3)], (1, 0, None)),
    (_put_acc, [(4, 5, 3), (4, 2), (4, 2), (4, 2)], (0, 0, 0, 0)),
    (_put_acc, [(4, 5, 3), (4, 2), (2,), ()], (0, 0, None, None)),
])
def test_index_put_rule_matches_loop_without_the_fallback(fn, shapes, dims):
    tp.manual_seed(0)
    args = [tp.randn(sh) if k in (0, len(shapes) - 1) else tp.randint(0, 3, sh) for k, sh in enumerate(shapes)]
    _WARNED.discard("tensorplug::index_put_")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a rule, not the loop fallback (which warns)
        got = tp.vmap(fn, in_dims=dims)(*args)
    close(got, _loop(fn, args, dims, 4), 1e-6)


SCATTERING_BACKWARDS = {  # backward formulas that write a gradient into fresh zeros
    "getitem": lambda w, i: (w[i] ** 2).sum(),
    "getitem, unbatched gradient": lambda w, i: (w[1] * w[i].sum()).sum(),
    "embedding": lambda w, i: (tp.nn.functional.embedding(i, w) ** 2).sum(),
    "index_select": lambda w, i: (w.index_select(0, i) ** 2).sum() + w.index_select(0, i).sum() * w[0, 0],
    "gather": lambda w, i: w.gather(0, i.unsqueeze(1).expand(2, 3)).sum() * w[0, 0],
    "select": lambda w, i: (w[1] ** 2).sum() * w[i].sum(),
    "slice": lambda w, i: (w[1:4] ** 2).sum() * w[i].sum(),
    "unfold": lambda w, i: (w.unfold(0, 2, 1) ** 2).sum() * w[i].sum(),
    "sort": lambda w, i: (w.sort(0)[0] * w[i].sum()).sum(),
}


@pytest.mark.parametrize("name", sorted(SCATTERING_BACKWARDS))
def test_per_sample_gradients_through_scattering_backwards(name):
    f, w, idx = SCATTERING_BACKWARDS[name], tp.randn(6, 3), tp.tensor([[0, 1], [2, 2], [5, 0]])
    got = tp.vmap(grad(f), in_dims=(None, 0))(w, idx)
    close(got, tp.stack([grad(f)(w, idx[k]) for k in range(3)]), 1e-5)


def test_a_rule_that_hands_a_call_to_the_loop_warns_like_the_fallback():
    def f(s, i):
        s = s.clone()
        s[:, i] = 7.0  # index_put_ with a slice before the batched index: the rule hands it to the loop
        return s

    s, i = tp.zeros(4, 2, 3), tp.tensor([[0], [1], [2], [0]])
    _WARNED.discard("tensorplug::index_put_")
    with pytest.warns(UserWarning, match="performance drop because we have not yet implemented the batching "
                                         "rule for tensorplug::index_put_"):
        out = tp.vmap(f)(s, i)
    assert out.tolist() == [_put_row(k) for k in (0, 1, 2, 0)]


def _put_row(col):
    return [[7.0 if c == col else 0.0 for c in range(3)] for _ in range(2)]


def test_every_op_a_batched_tensor_can_reach_has_a_rule_or_a_decomposition():
    from tensorplug.plugin_api import functionality_key, operators
    from tensorplug_vmap.rules import NO_RULE
    batched = functionality_key("Batched")
    missing = []
    for name, op in operators().items():
        takes_tensor = any("Tensor" in str(a.type) for a in op.schema.arguments)
        if name.startswith("tensorplug::") and takes_tensor and op.lookup(batched, None)[1] == "fallback":
            missing.append(name)
    assert missing == [] and NO_RULE == {}


def test_batched_integer_indices_and_checked_values():
    src, idx = tp.arange(12.0).reshape(4, 3), tp.tensor([[0, 1], [2, 0], [1, 1], [2, 2]])
    _WARNED.discard("tensorplug::index.Tensor")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # batched integer indices have a rule: no loop, no warning
        got = tp.vmap(lambda s, i: s[i])(src, idx)
        shared_src = tp.vmap(lambda i: src[i, i.flip(0)], in_dims=0)(idx)
    assert got.tolist() == [[src[k, j].item() for j in idx[k].tolist()] for k in range(4)]
    assert shared_src.tolist() == [src[idx[k], idx[k].flip(0)].tolist() for k in range(4)]
    bad = tp.tensor([[0, 1], [2, 3], [1, 1], [2, 2]])  # example 1 is out of bounds
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        tp.vmap(lambda s, i: s[i])(src, bad)
    with pytest.raises(RuntimeError, match="normal expects all elements of std >= 0.0"):
        tp.vmap(lambda s: tp.normal(tp.zeros(3), s), randomness="different")(tp.tensor([[1.0] * 3, [-1.0] * 3]))


# -- errors ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("args, kwargs, err, match", [
    ((tp.ones(2, 3), tp.ones(3, 3)), {}, ValueError,
     r"Expected all tensors to have the same size in the mapped dimension, got sizes \[2, 3\].*args\[1\] has size 3"),
    ((tp.ones(2, 3),), {"in_dims": 2}, ValueError,
     r"Got in_dim=2 for some input, but that input is a Tensor of dimensionality 2 so expected in_dim to "
     r"satisfy -2 <= in_dim < 2\. \(input args\[0\]\)"),
    ((tp.ones(2, 3), 3), {}, ValueError,
     r"Got in_dim=0 for an input but the input is of type <class 'int'>.*\(input args\[1\]\)"),
    ((tp.ones(2, 3),), {"in_dims": (None,)}, ValueError, "vmap: Expected at least one Tensor to vmap over"),
    ((tp.ones(2, 3),), {"in_dims": (0, 1)}, ValueError, "in_dims is not compatible with the structure of `inputs`"),
    ((tp.ones(2, 3),), {"in_dims": "a"}, ValueError, r"expected `in_dims` to be int or a \(potentially nested\)"),
    ((), {}, ValueError, "got no inputs"),
])
def test_argument_errors(args, kwargs, err, match):
    with pytest.raises(err, match=match):
        tp.vmap(lambda *a: a[0] * 2, **kwargs)(*args)


def test_non_tensor_output_error():
    with pytest.raises(ValueError, match="must only return Tensors, got type <class 'int'>"):
        tp.vmap(lambda a: 5)(tp.ones(2))


# -- integration ------------------------------------------------------------------------------------------------
def test_func_vmap_is_the_plugin_function():
    assert tp.func.vmap is tp.vmap


def test_disabled_plugin_names_it():
    tp.plugins.disable("vmap")
    try:
        with pytest.raises(AttributeError, match="vmap"):
            tp.func.vmap
        with pytest.raises(AttributeError, match="vmap"):
            jacrev(lambda x: x)(tp.ones(2))
    finally:
        tp.plugins.enable("vmap")
    close(tp.vmap(lambda a: a + 1)(tp.ones(2, dtype=tp.float64)), tp.full((2,), 2.0, dtype=tp.float64))


def test_ops_show_up_in_the_profile():
    prof_mod = pytest.importorskip("tensorplug_profiler")  # noqa: F841
    x = rnd(4, 3)
    with tp.profiler.profile() as prof:
        tp.vmap(lambda a: a.exp().sum())(x)
    names = [e.name for e in prof.events()]
    assert "tensorplug::exp" in names and "tensorplug::sum.dim_IntList" in names


@pytest.mark.filterwarnings("ignore:.*falling back to the CPU:UserWarning")
@pytest.mark.parametrize("device, plugin", [("cpu", "tensorplug_cpu"), ("minimal", "tensorplug_minimal"),
                                            ("openreg", "tensorplug_openreg"), ("openreg:1", "tensorplug_openreg")])
def test_vmap_and_per_sample_grads_on_every_backend(device, plugin):
    pytest.importorskip(plugin)  # make test installs all three; a user's environment may lack one
    tp.manual_seed(0)
    x, w, b = tp.randn(5, 4), tp.randn(4, 3), tp.randn(3)
    xd, wd, bd = x.to(device), w.to(device), b.to(device)
    got = tp.vmap(lambda a: (a @ wd + bd).relu().sum(), in_dims=0)(xd)
    assert got.device == tp.device(device) or got.device.type == device
    close(got.cpu(), (x @ w + b).relu().sum(1), 1e-5)

    def loss(weight, example):
        return ((example @ weight).tanh() ** 2).sum()

    per_sample = tp.vmap(grad(loss), in_dims=(None, 0))(wd, xd)
    expected = tp.stack([grad(loss)(w, x[i]) for i in range(5)])
    assert per_sample.shape == (5, 4, 3) and per_sample.device.type == tp.device(device).type
    close(per_sample.cpu(), expected, 1e-5)


def test_a_users_batching_rule_survives_disabling_and_enabling_vmap():
    # the user's rule overrides vmap's own (allow_override): vmap enabled again goes beneath it
    from tensorplug.library import LIBRARIES
    before = list(LIBRARIES)
    calls = []

    @register_batching_rule("tensorplug::neg")
    def rule(ctx, op, vals, bdims, args):
        calls.append(bdims[0])
        return op.positional(vals[0]), bdims[0]

    mine = [lib for lib in LIBRARIES if lib not in before]
    x = rnd(3, 2)
    try:
        tp.plugins.disable("vmap")
        tp.plugins.enable("vmap")  # raised: a kernel for 'tensorplug::neg' at 'Batched' is registered by 'user'
        close(tp.vmap(tp.neg)(x), -x)
        assert calls == [0]
    finally:
        for lib in mine:
            lib._destroy()
        if not tp.plugins.is_enabled("vmap"):
            tp.plugins.enable("vmap")
    close(tp.vmap(tp.neg)(x), -x)  # vmap's own rule is back
    assert calls == [0]
