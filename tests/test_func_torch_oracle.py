"""tensorplug.func's grad, grad_and_value, vjp and functional_call against torch.func (skipped without torch).

Each case runs the same function, written once for both libraries, on the same pytrees of data: the
results must have the same structure (container types, keys, lengths) and values, and errors the
same type and message (up to the library's name)."""

from __future__ import annotations

from collections import OrderedDict, namedtuple

import numpy as np
import pytest

import tensorplug as tp

torch = pytest.importorskip("torch")

Pair = namedtuple("Pair", ["w", "b"])
RNG = np.random.default_rng(0)
W, B, X, V = RNG.standard_normal((3, 2)), RNG.standard_normal(2), RNG.standard_normal((4, 3)), RNG.standard_normal(2)
T = RNG.standard_normal((4, 2))


def to(L, tree):
    """``tree`` with numpy leaves made tensors of library ``L`` (containers rebuilt with their types)."""
    if isinstance(tree, np.ndarray):
        return L.from_numpy(tree.copy())
    if isinstance(tree, tuple) and hasattr(type(tree), "_fields"):
        return type(tree)(*(to(L, c) for c in tree))
    if isinstance(tree, (tuple, list)):
        return type(tree)(to(L, c) for c in tree)
    if isinstance(tree, dict):
        return type(tree)((k, to(L, v)) for k, v in tree.items())
    return tree


def same(ours, theirs, path="result", tol=1e-10):
    """Same structure and values; tensors compared as arrays (and on requires_grad)."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, tp.Tensor), (path, type(ours))
        assert tuple(ours.shape) == tuple(theirs.shape), (path, ours.shape, theirs.shape)
        assert ours.requires_grad == theirs.requires_grad, (path, ours.requires_grad, theirs.requires_grad)
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol,
                                   err_msg=path)
        return
    assert type(ours).__name__ == type(theirs).__name__, (path, type(ours), type(theirs))
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs), (path, list(ours), list(theirs))
        for k in theirs:
            same(ours[k], theirs[k], f"{path}[{k!r}]", tol)
    elif isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs), (path, len(ours), len(theirs))
        for i, (o, t) in enumerate(zip(ours, theirs)):
            same(o, t, f"{path}[{i}]", tol)
    else:
        assert ours == theirs, (path, ours, theirs)


def both(run):
    """``run(L)`` for tensorplug and torch: both results compared, or both errors."""
    try:
        theirs = run(torch)
    except Exception as e:  # noqa: BLE001 - the oracle's error is the expectation
        with pytest.raises(type(e)) as info:
            run(tp)
        assert str(info.value) == str(e).replace("torch.", "tensorplug.").replace("torch ", "tensorplug "), \
            (str(info.value), str(e))
        return None
    ours = run(tp)
    same(ours, theirs)
    return ours


# -- grad / grad_and_value ------------------------------------------------------------------------------
def _mlp(p, x):
    return ((x @ p["lin"]["w"] + p["lin"]["b"]).tanh() * p["scale"]).sum()


GRAD_CASES = {
    "tuple_param": (lambda L, t, x: ((x @ t[0] + t[1]) ** 2).sum(), dict(), ((W, B), X)),
    "list_param": (lambda L, t, x: ((x @ t[0]).sin() * t[1]).sum(), dict(), ([W, B], X)),
    "nested_dict": (lambda L, p, x: _mlp(p, x), dict(), ({"lin": {"w": W, "b": B}, "scale": V}, X)),
    "ordered_dict": (lambda L, p, x: (x @ p["w"] + p["b"]).exp().sum(), dict(),
                     (OrderedDict(w=W, b=B), X)),
    "namedtuple": (lambda L, p, x: (x @ p.w - p.b).pow(2).sum(), dict(), (Pair(W, B), X)),
    "argnums_tuple": (lambda L, p, x: _mlp(p, x), dict(argnums=(0, 1)), ({"lin": {"w": W, "b": B}, "scale": V}, X)),
    "argnums_tuple_reversed": (lambda L, t, x: ((x @ t[0] + t[1]) ** 2).sum(), dict(argnums=(1, 0)), ((W, B), X)),
    "argnums_negative": (lambda L, t, x: ((x @ t[0] + t[1]) ** 2).sum(), dict(argnums=-1), ((W, B), X)),
    "argnums_one_tuple": (lambda L, t, x: ((x @ t[0] + t[1]) ** 2).sum(), dict(argnums=(0,)), ((W, B), X)),
    "unused_leaf": (lambda L, t, x: (x @ t[0]).sum(), dict(), ((W, B), X)),
    "constant_output": (lambda L, t, x: x.sum(), dict(), ((W, B), X)),
    "has_aux": (lambda L, t, x: (((x @ t[0]) ** 2).sum(), {"pred": x @ t[0], "n": (t[1] * 2,)}),
                dict(has_aux=True), ((W, B), X)),
    "has_aux_argnums": (lambda L, t, x: ((x @ t[0]).sum() * x.sum(), [x * 2]), dict(argnums=(0, 1), has_aux=True),
                        ((W, B), X)),
    "empty_dict_leaf": (lambda L, t, x: (x @ t["w"]).sum(), dict(), ({"w": W, "extra": {}}, X)),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
@pytest.mark.parametrize("transform", ["grad", "grad_and_value"])
def test_grad_over_pytrees_matches_torch_func(name, transform):
    f, kw, data = GRAD_CASES[name]
    both(lambda L: getattr(L.func, transform)(lambda *a: f(L, *a), **kw)(*to(L, data)))


def test_grad_keyword_arguments_pass_through():
    both(lambda L: L.func.grad(lambda p, x, *, k: (x @ p["w"] * k).sum())(to(L, {"w": W}), to(L, X), k=to(L, B)))


def test_grad_of_grad_over_a_dict():
    def run(L):
        inner = L.func.grad(lambda p: (p["a"] ** 3 * p["b"]).sum())
        return L.func.grad(lambda p: inner(p)["a"].sum() + inner(p)["b"].sum())(to(L, {"a": B, "b": V}))
    both(run)


def test_grad_through_a_closure_over_a_tensor_that_requires_grad():
    # the inner grad's value depends on the outer variable y: its gradient flows through
    def nested(L):
        x0, y0 = to(L, B), to(L, V)
        return L.func.grad(lambda y: L.func.grad(lambda x: (x * x * y).sum())(x0).sum())(y0)
    both(nested)

    def closure(L):
        y = to(L, V).requires_grad_()
        g = L.func.grad(lambda x: (x * x * y).sum())(to(L, B))
        (gy,) = L.autograd.grad(g.sum(), y)
        return g, gy
    both(closure)


def test_grad_results_do_not_require_grad_and_inputs_may():
    def run(L):
        x = to(L, B).requires_grad_()
        g, v = L.func.grad_and_value(lambda t: (t ** 2).sum())(x)
        return g, v
    both(run)


GRAD_ERRORS = {
    "non_tensor_leaf": (lambda L: L.func.grad(lambda p: p["w"].sum())({"w": to(L, B), "n": 3})),
    "none_leaf": (lambda L: L.func.grad(lambda t: t[0].sum())((to(L, B), None))),
    "vector_output": (lambda L: L.func.grad(lambda t: t * 2)(to(L, B))),
    "one_element_output": (lambda L: L.func.grad(lambda t: t.sum().reshape(1))(to(L, B))),
    "float_output": (lambda L: L.func.grad(lambda t: 1.0)(to(L, B))),
    "aux_not_a_pair": (lambda L: L.func.grad(lambda t: t.sum(), has_aux=True)(to(L, B))),
    "aux_non_tensor": (lambda L: L.func.grad(lambda t: (t.sum(), "aux"), has_aux=True)(to(L, B))),
    "argnums_repeated": (lambda L: L.func.grad(lambda t: t.sum(), argnums=(0, 0))(to(L, B))),
    "argnums_empty": (lambda L: L.func.grad(lambda t: t.sum(), argnums=())(to(L, B))),
    "argnums_list": (lambda L: L.func.grad(lambda t: t.sum(), argnums=[0])(to(L, B))),
    "argnums_float": (lambda L: L.func.grad(lambda t: t.sum(), argnums=(0.5,))(to(L, B))),
    "argnums_out_of_range": (lambda L: L.func.grad(lambda t: t.sum(), argnums=3)(to(L, B))),
    "argnums_negative_out_of_range": (lambda L: L.func.grad(lambda t: t.sum(), argnums=-2)(to(L, B))),
    "no_arguments": (lambda L: L.func.grad(lambda: to(L, B).sum())()),
    "value_aux_not_a_pair": (lambda L: L.func.grad_and_value(lambda t: (t.sum(),), has_aux=True)(to(L, B))),
}


@pytest.mark.parametrize("name", sorted(GRAD_ERRORS))
def test_grad_errors_match_torch_func(name):
    both(GRAD_ERRORS[name])


# -- vjp ----------------------------------------------------------------------------------------------
def _vjp_run(f, primals, cot, **kw):
    def run(L):
        res = L.func.vjp(lambda *a: f(L, *a), *to(L, primals), **kw)
        return (res[0], res[1](to(L, cot))) + tuple(res[2:])
    return run


VJP_CASES = {
    "tensor": (lambda L, x: x.sin(), (B,), B),
    "two_primals": (lambda L, x, y: x @ y, (X, W), T),
    "dict_primal_tuple_output": (lambda L, p, x: (x @ p["w"], (p["b"] * x.sum(),)),
                                 ({"w": W, "b": B}, X), (T, (V,))),
    "dict_output": (lambda L, x: {"s": x.sin(), "c": [x.cos(), x * x]}, (B,), {"s": V, "c": [B, V]}),
    "list_primal": (lambda L, t: t[0] * t[1], ([B, V],), B),
    "namedtuple_primal": (lambda L, p: p.w.sum(0) * p.b, (Pair(W, B),), V),
    "unused_primal": (lambda L, x, y: x * 2, (B, V), V),
    "scalar_output": (lambda L, x: (x ** 2).sum(), (B,), np.array(2.0)),
}


@pytest.mark.parametrize("name", sorted(VJP_CASES))
def test_vjp_over_pytrees_matches_torch_func(name):
    f, primals, cot = VJP_CASES[name]
    both(_vjp_run(f, primals, cot))


def test_vjp_has_aux_and_vjp_fn_options():
    both(_vjp_run(lambda L, x: (x.exp(), {"aux": x * 3}), (B,), V, has_aux=True))

    def twice(L):
        out, fn = L.func.vjp(lambda x: x.exp(), to(L, B))
        return fn(to(L, V)), fn(to(L, V), retain_graph=True)
    both(twice)


def test_vjp_of_cotangents_with_history_stays_connected():
    # d/dv of vjp_fn(v) (a linear function of v): the cotangent's history flows through
    def run(L):
        _, fn = L.func.vjp(lambda x: x.sin() * 2, to(L, B))
        return L.func.grad(lambda v: (fn(v)[0] ** 2).sum())(to(L, V))
    both(run)


VJP_ERRORS = {
    "cotangent_not_a_tuple": (lambda L: L.func.vjp(lambda x: (x, x * 2), to(L, B))[1](to(L, B))),
    "cotangent_too_short": (lambda L: L.func.vjp(lambda x: (x, x * 2), to(L, B))[1]((to(L, B),))),
    "cotangent_list_for_tuple": (lambda L: L.func.vjp(lambda x: (x, x * 2), to(L, B))[1]([to(L, B), to(L, B)])),
    "cotangent_dict_keys": (lambda L: L.func.vjp(lambda x: {"a": x}, to(L, B))[1]({"b": to(L, B)})),
    "non_tensor_output": (lambda L: L.func.vjp(lambda x: 3, to(L, B))),
    "empty_output": (lambda L: L.func.vjp(lambda x: (), to(L, B))),
    "none_output": (lambda L: L.func.vjp(lambda x: None, to(L, B))),
    "integer_output": (lambda L: L.func.vjp(lambda x: (x * 2).long(), to(L, B))),
    "aux_not_a_pair": (lambda L: L.func.vjp(lambda x: x, to(L, B), has_aux=True)),
    "non_tensor_primal": (lambda L: L.func.vjp(lambda x: x, 3)),
    "non_tensor_leaf": (lambda L: L.func.vjp(lambda p: p[0], (to(L, B), 2.0))),
}


@pytest.mark.parametrize("name", sorted(VJP_ERRORS))
def test_vjp_errors_match_torch_func(name):
    both(VJP_ERRORS[name])


# -- functional_call ---------------------------------------------------------------------------------
def _model(L):
    """Linear -> Tanh -> Linear, and a buffer that scales the output, with the same weights in both."""
    class Model(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.net = L.nn.Sequential(L.nn.Linear(3, 5), L.nn.Tanh(), L.nn.Linear(5, 2))
            self.register_buffer("scale", L.ones(2, dtype=L.float64))

        def forward(self, x, shift=0.0):
            return self.net(x) * self.scale + shift

    m = Model().double()
    rng = np.random.default_rng(5)
    for name, p in m.named_parameters():
        p.data = L.from_numpy(rng.standard_normal(tuple(p.shape)))
    return m


def _params(L, m, seed=7):
    rng = np.random.default_rng(seed)
    return {n: L.from_numpy(rng.standard_normal(tuple(p.shape))) for n, p in m.named_parameters()}


def test_functional_call_runs_with_given_tensors_and_restores_the_module():
    def run(L):
        m = _model(L)
        before = {n: p for n, p in m.named_parameters()}
        x = to(L, X)
        p = _params(L, m)
        out = L.func.functional_call(m, p, (x,))
        single = L.func.functional_call(m, p, x)
        kw = L.func.functional_call(m, (p, {"scale": L.full((2,), 2.0, dtype=L.float64)}), (x,), {"shift": 1.0})
        restored = all(a is b for a, b in zip(before.values(), dict(m.named_parameters()).values()))
        return out, single, kw, m(x), restored, sorted(n for n, _ in m.named_parameters())
    both(run)


def test_grad_and_per_sample_grads_over_functional_call():
    def run(L):
        m = _model(L)
        p = _params(L, m)
        t = to(L, T)

        def loss(params, x, target):
            return ((L.func.functional_call(m, params, (x,)) - target) ** 2).sum()
        g = L.func.grad(loss)(p, to(L, X), t)
        gv = L.func.grad_and_value(loss, argnums=(0, 1))(p, to(L, X), t)
        return g, gv
    both(run)


def test_functional_call_leaves_module_parameters_out_of_the_graph():
    def run(L):
        m = _model(L)
        p = {k: v.detach() for k, v in m.named_parameters()}
        g = L.func.grad(lambda q: L.func.functional_call(m, q, (to(L, X),)).sum())(p)
        return g, [q.grad is None for q in m.parameters()]
    both(run)


def _tied(L):
    class Tied(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = L.nn.Linear(2, 2, bias=False).double()
            self.b = L.nn.Linear(2, 2, bias=False).double()
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.a(x) + self.b(x)
    return Tied()


def test_functional_call_tied_weights():
    x = RNG.standard_normal((3, 2))
    w, w2 = RNG.standard_normal((2, 2)), RNG.standard_normal((2, 2))
    both(lambda L: L.func.functional_call(_tied(L), {"a.weight": to(L, w)}, (to(L, x),)))
    both(lambda L: L.func.functional_call(_tied(L), {"a.weight": to(L, w)}, (to(L, x),), tie_weights=False) * 0)
    both(lambda L: L.func.functional_call(_tied(L), {"a.weight": to(L, w), "b.weight": to(L, w2)}, (to(L, x),)))


FUNCTIONAL_CALL_ERRORS = {
    "repeated_keys": lambda L: L.func.functional_call(_model(L), ({"scale": L.ones(2)}, {"scale": L.ones(2)}),
                                                      (to(L, X),)),
    "not_dicts": lambda L: L.func.functional_call(_model(L), ({"scale": L.ones(2)}, 3), (to(L, X),)),
    "not_a_dict": lambda L: L.func.functional_call(_model(L), 3, (to(L, X),)),
    "strict_missing_and_unexpected": lambda L: L.func.functional_call(
        _model(L), {"scale": L.ones(2, dtype=L.float64), "bogus": L.ones(1)}, (to(L, X),), strict=True),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONAL_CALL_ERRORS))
def test_functional_call_errors_match_torch_func(name):
    both(FUNCTIONAL_CALL_ERRORS[name])


def test_functional_call_reports_reassigned_tensors_in_the_dict():
    def run(L):
        class Counter(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("count", L.zeros((), dtype=L.float64))

            def forward(self, x):
                self.count = self.count + 1
                return x * self.count

        m = Counter()
        state = {"count": L.full((), 5.0, dtype=L.float64)}
        out = L.func.functional_call(m, state, (to(L, B),))
        return out, state, m.count, [n for n, _ in m.named_buffers()]
    both(run)
