"""tensorplug.func's Jacobians and Hessians against torch.func on the same data (skipped cleanly without torch).

The functions index their input (select, slices, integer and tensor indices, gather): their backward
writes gradients into fresh zeros, which under vmap and with create_graph is where gradients used to
go missing."""

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import func as F

torch = pytest.importorskip("torch")
tf = torch.func


def _lib(t):
    return torch if isinstance(t, torch.Tensor) else tp


def _idx(x):
    return _lib(x).tensor([2, 0, 2])


def _gidx(x):
    return _lib(x).tensor([[1, 0], [2, 2], [0, 1]])


# scalar functions of a (3, 4) input (vectors use .reshape first)
SCALAR = {
    "select_times_sum": lambda x: (x ** 3).sum() * x[0, 0],
    "vector_select": lambda x: (x.reshape(-1) ** 3).sum() * x.reshape(-1)[0],
    "slice": lambda x: (x[1:] ** 2).sum() * x[0].sum(),
    "column": lambda x: (x[:, 0] * x[:, 1]).sum() + (x[:, 0] ** 3).sum(),
    "step_slice": lambda x: (x[:, ::2].exp() * x[0, 1]).sum(),
    "index_tensor": lambda x: (x[_idx(x)] ** 2).sum() * x[1, 1],
    "index_pair": lambda x: (x[_idx(x), _idx(x)] ** 3).sum(),
    "gather": lambda x: (x.gather(1, _gidx(x)) ** 2 * x[:, :2]).sum(),
    "index_select": lambda x: (x.index_select(1, _idx(x)).sin() * x[0, 0]).sum(),
    "diagonal": lambda x: (x.diagonal() ** 3).sum() * x[2, 3],
    "narrow_unbind": lambda x: (x.narrow(1, 1, 2) ** 2).sum() * x.unbind(0)[2].sum(),
}

# vector-valued functions (jacrev)
VECTOR = {
    "select_outer": lambda x: x * x[0, 0],
    "slices": lambda x: x[1:] * x[:-1],
    "column": lambda x: x[:, 0] * x.sum(),
    "index_tensor": lambda x: x[_idx(x)] ** 2,
    "gather": lambda x: x.gather(1, _gidx(x)) * x[:, 0:1],
    "two_outputs_cat": lambda x: _lib(x).cat([x[0] ** 2, x[:, 1] * x[2, 2]]),
}

X = np.random.default_rng(0).standard_normal((3, 4))


def _pair():
    return tp.from_numpy(X.copy()), torch.from_numpy(X.copy())


def _close(ours, theirs, tol=1e-9):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", sorted(SCALAR))
def test_hessian_of_indexing_functions_matches_torch_func(name):
    f = SCALAR[name]
    x, xt = _pair()
    want = tf.hessian(f)(xt)
    _close(F.hessian(f)(x), want)
    _close(F.jacrev(F.jacrev(f))(x), want)
    _close(F.jacrev(F.grad(f))(x), want)
    h = F.hessian(f)(x).reshape(12, 12)
    _close(h, h.t())  # a Hessian is symmetric


@pytest.mark.parametrize("name", sorted(SCALAR))
def test_hessian_matches_a_loop_of_autograd_grad(name):
    f = SCALAR[name]
    x = tp.from_numpy(X.copy()).requires_grad_()
    (g,) = tp.autograd.grad(f(x), x, create_graph=True)
    rows = [tp.autograd.grad(g.reshape(-1)[i], x, retain_graph=True)[0] for i in range(12)]
    _close(F.hessian(f)(tp.from_numpy(X.copy())), tp.stack(rows).reshape(3, 4, 3, 4))


@pytest.mark.parametrize("name", sorted(VECTOR))
def test_jacrev_of_indexing_functions_matches_torch_func(name):
    f = VECTOR[name]
    x, xt = _pair()
    _close(F.jacrev(f)(x), tf.jacrev(f)(xt))
    _close(F.jacrev(F.jacrev(f))(x), tf.jacrev(tf.jacrev(f))(xt))


@pytest.mark.parametrize("name", ["select_times_sum", "index_tensor", "gather", "column"])
def test_vmap_of_hessian_matches_torch_func(name):
    f = SCALAR[name]
    xs = np.random.default_rng(1).standard_normal((2, 3, 4))
    _close(tp.vmap(F.hessian(f))(tp.from_numpy(xs)), tf.vmap(tf.hessian(f))(torch.from_numpy(xs)))
    # a batch of one: the case where a fresh per-example buffer used to alias an unbatched one
    _close(tp.vmap(F.hessian(f))(tp.from_numpy(xs[:1])), tf.vmap(tf.hessian(f))(torch.from_numpy(xs[:1])))


def test_the_issue_example():
    x, xt = tp.tensor([1.0, 2.0, 3.0], dtype=tp.float64), torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    f = lambda x: (x ** 3).sum() * x[0]  # noqa: E731
    _close(F.hessian(f)(x), tf.hessian(f)(xt))
    np.testing.assert_allclose(F.hessian(f)(x).numpy(), [[12, 12, 27], [12, 12, 0], [27, 0, 18]])


def _writes_through_views(x):
    z = _lib(x).zeros_like(x)
    z[0] = (x ** 2).sum()
    z[1:].copy_(x[:2] * 3)
    z.select(0, 2).mul_(x[0])
    return (z * z).sum()


def test_vmap_of_grad_of_writes_through_views_matches_torch_func():
    # grad inside vmap records on the batched tensors: a write through z[0] must rebase z's history
    xs = np.random.default_rng(2).standard_normal((3, 3))
    want = tf.vmap(tf.grad(_writes_through_views))(torch.from_numpy(xs))
    _close(tp.vmap(F.grad(_writes_through_views))(tp.from_numpy(xs)), want)
    _close(tp.vmap(F.grad(_writes_through_views))(tp.from_numpy(xs[:1])), want[:1])


@pytest.mark.parametrize("name", ["select_times_sum", "gather"])
def test_vmap_of_nested_grad_matches_torch_func(name):
    # the inner grad's input is the outer grad's batched leaf: it stays connected to it
    f = SCALAR[name]
    xs = np.random.default_rng(3).standard_normal((2, 3, 4))
    inner = lambda lib: (lambda x: lib.func.grad(f)(x)[0, 0])  # noqa: E731
    _close(tp.vmap(F.grad(inner(tp)))(tp.from_numpy(xs)), tf.vmap(tf.grad(inner(torch)))(torch.from_numpy(xs)))
    _close(tp.vmap(F.jacrev(F.grad(f)))(tp.from_numpy(xs)), tf.vmap(tf.jacrev(tf.grad(f)))(torch.from_numpy(xs)))


# -- pytrees: jacrev and hessian over tuples, lists, dicts; argnums, has_aux, chunk_size --------------
def _tree(L, tree):
    if isinstance(tree, np.ndarray):
        return L.from_numpy(tree.copy())
    if isinstance(tree, dict):
        return {k: _tree(L, v) for k, v in tree.items()}
    if isinstance(tree, (tuple, list)):
        return type(tree)(_tree(L, v) for v in tree)
    return tree


def _same(ours, theirs, path="result"):
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, tp.Tensor), (path, type(ours))
        assert tuple(ours.shape) == tuple(theirs.shape), (path, ours.shape, theirs.shape)
        assert ours.requires_grad == theirs.requires_grad, path
        np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-9, atol=1e-9, err_msg=path)
        return
    assert type(ours) is type(theirs), (path, type(ours), type(theirs))
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs), path
        for k in theirs:
            _same(ours[k], theirs[k], f"{path}[{k!r}]")
    elif isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs), path
        for i, (o, t) in enumerate(zip(ours, theirs)):
            _same(o, t, f"{path}[{i}]")
    else:
        assert ours == theirs, path


def _both(run):
    try:
        theirs = run(torch)
    except Exception as e:  # noqa: BLE001 - the oracle's error is the expectation
        with pytest.raises(type(e)) as info:
            run(tp)
        assert str(info.value) == str(e), (str(info.value), str(e))
        return
    _same(run(tp), theirs)


R = np.random.default_rng(4)
P = {"w": R.standard_normal((3, 2)), "b": R.standard_normal(2)}
A, C = R.standard_normal(3), R.standard_normal(2)

JACREV_CASES = {
    "dict_in_dict_out": (lambda L, p: {"y": p["w"].sum(0) * p["b"], "z": p["b"].exp()}, dict(), (P,)),
    "tuple_argnums": (lambda L, x, y: (x * y.sum(), y ** 2), dict(argnums=(0, 1)), (A, C)),
    "argnums_second_with_a_non_tensor_first": (lambda L, n, x: x * n, dict(argnums=1), (3.0, A)),
    "list_output": (lambda L, x: [x.sin(), x[1:] * x[0]], dict(), (A,)),
    "nested_input": (lambda L, t: t[0] * t[1]["c"].sum(), dict(), ((A, {"c": C}),)),
    "scalar_output": (lambda L, p: (p["w"] @ p["b"]).sum(), dict(), (P,)),
    "has_aux": (lambda L, x: (x.sin() * x[0], {"a": x * 2}), dict(has_aux=True), (A,)),
    "chunk_size_1": (lambda L, p: (p["w"] * p["b"], p["b"].sum()), dict(chunk_size=1), (P,)),
    "chunk_size_4": (lambda L, p: (p["w"] * p["b"], p["b"].sum()), dict(chunk_size=4), (P,)),
    "chunk_size_large": (lambda L, p: (p["w"] * p["b"], p["b"].sum()), dict(chunk_size=100), (P,)),
    "output_independent_of_input": (lambda L, x, y: y * 2, dict(argnums=(0, 1)), (A, C)),
}


@pytest.mark.parametrize("name", sorted(JACREV_CASES))
def test_jacrev_over_pytrees_matches_torch_func(name):
    f, kw, data = JACREV_CASES[name]
    _both(lambda L: L.func.jacrev(lambda *a: f(L, *a), **kw)(*_tree(L, data)))


HESSIAN_CASES = {
    "dict": (lambda L, p: ((p["w"] @ p["b"]) ** 3).sum() * p["b"][0], dict(), (P,)),
    "tuple_argnums": (lambda L, x, y: (x.sin() * y.sum() ** 2).sum() * x[0], dict(argnums=(0, 1)), (A, C)),
    "tuple_input": (lambda L, t: (t[0] ** 2).sum() * t[1][1], dict(), ((A, C),)),
}


@pytest.mark.parametrize("name", sorted(HESSIAN_CASES))
def test_hessian_over_pytrees_matches_torch_func(name):
    f, kw, data = HESSIAN_CASES[name]
    _both(lambda L: L.func.hessian(lambda *a: f(L, *a), **kw)(*_tree(L, data)))


JACREV_ERRORS = {
    "chunk_size_zero": lambda L: L.func.jacrev(lambda x: x, chunk_size=0),
    "chunk_size_negative": lambda L: L.func.jacrev(lambda x: x, chunk_size=-2),
    "non_tensor_output": lambda L: L.func.jacrev(lambda x: 3)(_tree(L, A)),
    "aux_not_a_pair": lambda L: L.func.jacrev(lambda x: x, has_aux=True)(_tree(L, A)),
    "argnums_out_of_range": lambda L: L.func.jacrev(lambda x: x, argnums=1)(_tree(L, A)),
    "hessian_argnums_out_of_range": lambda L: L.func.hessian(lambda x: x.sum(), argnums=1)(_tree(L, A)),
    "non_tensor_input": lambda L: L.func.jacrev(lambda x: x)(3.0),
    "non_tensor_leaf": lambda L: L.func.jacrev(lambda p: p["a"])({"a": _tree(L, A), "n": 1}),
}


@pytest.mark.parametrize("name", sorted(JACREV_ERRORS))
def test_jacrev_errors_match_torch_func(name):
    _both(JACREV_ERRORS[name])


def test_vmap_of_jacrev_and_per_sample_grads_of_a_dict():
    xs = R.standard_normal((5, 3))
    _both(lambda L: L.func.vmap(L.func.jacrev(lambda p, x: {"o": x @ p["w"] + p["b"]}), in_dims=(None, 0))(
        _tree(L, P), _tree(L, xs)))
    _both(lambda L: L.func.vmap(L.func.grad(lambda p, x: ((x @ p["w"]).tanh() * p["b"]).sum()), in_dims=(None, 0))(
        _tree(L, P), _tree(L, xs)))


def test_per_sample_grads_with_functional_call():
    w, b = R.standard_normal((2, 3)), R.standard_normal(2)
    xs, ts = R.standard_normal((6, 3)), R.standard_normal((6, 2))

    def run(L):
        model = L.nn.Linear(3, 2).double()
        params = {"weight": _tree(L, w), "bias": _tree(L, b)}

        def loss(p, x, t):
            return ((L.func.functional_call(model, p, (x.unsqueeze(0),)) - t) ** 2).sum()
        return L.func.vmap(L.func.grad(loss), in_dims=(None, 0, 0))(params, _tree(L, xs), _tree(L, ts))
    _both(run)
