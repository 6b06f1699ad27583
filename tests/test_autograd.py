"""The autograd engine: recording, backward, grad, hooks, modes, errors, custom Functions."""

import math
import threading

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import autograd


def leaf(values, dtype=tp.float64):
    return tp.tensor(values, dtype=dtype, requires_grad=True)


# -- recording -------------------------------------------------------------------------
def test_tensors_that_do_not_require_grad_record_nothing():
    x = tp.ones(3)
    y = x * 2 + 1
    assert y.grad_fn is None and not y.requires_grad
    assert not (y._ks & tp.dispatch.Autograd.bit)


def test_results_of_ops_on_leaves_that_require_grad_have_named_nodes():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    assert y.requires_grad and not y.is_leaf and x.is_leaf
    assert y.grad_fn.name() == "SumBackward0"
    (mul_node, nr), = y.grad_fn.next_functions
    assert mul_node.name() == "MulBackward0" and nr == 0
    assert [type(n).__name__ for n, _ in mul_node.next_functions] == ["AccumulateGrad", "AccumulateGrad"]
    assert "grad_fn=<SumBackward0>" in repr(y)


def test_integer_and_bool_results_carry_no_history():
    x = leaf([1.0, -2.0])
    assert (x > 0).grad_fn is None and not (x > 0).requires_grad
    assert x.argmax().grad_fn is None


def test_no_grad_skips_recording_and_is_thread_local():
    x = leaf([1.0])
    seen = {}
    barrier = threading.Barrier(2)

    def other():
        barrier.wait()
        seen["other"] = (x * 2).requires_grad
        barrier.wait()

    t = threading.Thread(target=other)
    t.start()
    with tp.no_grad():
        barrier.wait()
        seen["main"] = (x * 2).requires_grad
        assert not tp.is_grad_enabled()
        barrier.wait()
    t.join()
    assert seen == {"main": False, "other": True}
    assert tp.is_grad_enabled()


def test_grad_mode_nesting_and_decorators():
    x = leaf([1.0])
    with tp.no_grad():
        with tp.enable_grad():
            assert (x * 2).requires_grad
        assert not (x * 2).requires_grad
    tp.set_grad_enabled(False)
    assert not tp.is_grad_enabled()
    tp.set_grad_enabled(True)
    with tp.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert tp.is_grad_enabled()

    @tp.no_grad()
    def f(t):
        return t * 2

    assert not f(x).requires_grad and tp.is_grad_enabled()
    with tp.inference_mode():
        assert not (x * 2).requires_grad
    assert tp.is_grad_enabled()


# -- backward and grad -------------------------------------------------------------------
def test_backward_accumulates_into_leaves():
    x = leaf([1.0, 2.0, 3.0])
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0, 6.0])
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 7.0, 9.0])


def test_backward_needs_a_gradient_for_non_scalars():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()
    (x * 2).backward(tp.tensor([1.0, 10.0], dtype=tp.float64))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 20.0])


def test_backward_on_a_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        tp.ones(2).sum().backward()


def test_a_gradient_shared_by_two_inputs_is_copied_per_leaf():
    a, b = leaf([1.0]), leaf([2.0])
    (a + b).sum().backward()
    a.grad.add_(100)
    assert b.grad.item() == 1.0


def test_autograd_grad_returns_gradients_without_touching_dot_grad():
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    gx, gy = autograd.grad((x * y).sum(), (x, y))
    np.testing.assert_allclose(gx.numpy(), [3.0, 4.0])
    np.testing.assert_allclose(gy.numpy(), [1.0, 2.0])
    assert x.grad is None and y.grad is None


def test_grad_of_unused_input_needs_allow_unused():
    x, y = leaf([1.0]), leaf([2.0])
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        autograd.grad((x * 2).sum(), (x, y))
    gx, gy = autograd.grad((x * 2).sum(), (x, y), allow_unused=True)
    assert gy is None and gx.item() == 2.0


def test_grad_with_respect_to_a_non_leaf():
    x = leaf([2.0])
    h = x * 3
    (g,) = autograd.grad((h * h).sum(), h)
    assert g.item() == 12.0


def test_backward_with_inputs_accumulates_only_there():
    x, y = leaf([1.0]), leaf([2.0])
    (x * y).sum().backward(inputs=[x])
    assert x.grad.item() == 2.0 and y.grad is None


def test_second_backward_without_retain_graph_raises():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0])
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_higher_order_gradients():
    x = leaf(2.0)
    y = x ** 3
    (g,) = autograd.grad(y, x, create_graph=True)
    (gg,) = autograd.grad(g, x, create_graph=True)
    (ggg,) = autograd.grad(gg, x)
    assert (g.item(), gg.item(), ggg.item()) == (12.0, 12.0, 6.0)


@pytest.mark.parametrize("fn,first,second", [
    (lambda x: x.tanh(), lambda v: 1 - math.tanh(v) ** 2,
     lambda v: -2 * math.tanh(v) * (1 - math.tanh(v) ** 2)),
    (lambda x: x.exp() * x, lambda v: math.exp(v) * (1 + v), lambda v: math.exp(v) * (2 + v)),
])
def test_second_derivatives_match_analytic_values(fn, first, second):
    for v in (-0.7, 0.3, 1.1):
        x = leaf(v)
        (g,) = autograd.grad(fn(x), x, create_graph=True)
        (gg,) = autograd.grad(g, x)
        assert g.item() == pytest.approx(first(v), rel=1e-12)
        assert gg.item() == pytest.approx(second(v), rel=1e-12)


def test_second_derivative_of_softmax_and_matmul_chain():
    rng = np.random.default_rng(0)
    x = leaf(rng.standard_normal(4))
    w = tp.tensor(rng.standard_normal((4, 4)))
    assert autograd.gradgradcheck(lambda t: tp.softmax(t @ w, 0) @ w, (x,))
    assert autograd.gradcheck(lambda t: (tp.softmax(t @ w, 0) @ w).sum(), (x,))


def test_a_long_chain_backpropagates_without_recursion():
    x = tp.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.sum().backward()
    assert x.grad.item() == 1.0


# -- hooks -------------------------------------------------------------------------------
def test_tensor_hooks_see_and_replace_gradients():
    x = leaf([1.0, 2.0])
    seen = []
    h = x.register_hook(lambda g: seen.append(g.clone()) or g * 10)
    (x * 2).sum().backward()
    np.testing.assert_allclose(seen[0].numpy(), [2.0, 2.0])
    np.testing.assert_allclose(x.grad.numpy(), [20.0, 20.0])
    h.remove()
    x.grad = None
    (x * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_hook_on_a_non_leaf_changes_what_flows_upstream():
    x = leaf([1.0])
    y = x * 3
    y.register_hook(lambda g: g * 0)
    (y * y).sum().backward()
    assert x.grad.item() == 0.0


def test_retain_grad_keeps_non_leaf_gradients():
    x = leaf([1.0, 2.0])
    y = x * 3
    y.retain_grad()
    assert y.retains_grad
    (y * y).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), [6.0, 12.0])
    z = x * 2
    (z * 1).sum().backward()
    assert z.grad is None


def test_node_hooks_and_post_accumulate_hooks():
    x = leaf([1.0])
    calls = []
    y = x * 2
    y.grad_fn.register_hook(lambda gi, go: calls.append(("node", len(gi), len(go))))
    x.register_post_accumulate_grad_hook(lambda t: calls.append(("acc", t.grad.item())))
    y.sum().backward()
    assert calls == [("node", 2, 1), ("acc", 2.0)]


# -- in-place and views -------------------------------------------------------------------
def test_in_place_on_a_leaf_that_requires_grad_raises():
    x = leaf([1.0])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        x.add_(1)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used"):
        x[0:1].mul_(2)
    with tp.no_grad():
        x.add_(1)
    assert x.item() == 2.0


def test_a_view_made_before_an_in_place_op_on_its_base_sees_the_write():
    x = leaf([1.0, 2.0, 3.0])
    y = x * 1
    v = y[:2]
    y.mul_(10)
    assert v.grad_fn.name() == "AsStridedBackward0"
    v.sum().backward()
    assert x.grad.tolist() == [10.0, 10.0, 0.0]  # PyTorch's; the old history gave [1, 1, 0]


def test_views_made_before_a_write_through_another_view_see_it():
    x = leaf([1.0, 2.0, 3.0])
    y = x * 1
    a, b, t = y[:2], y[1:], y[1:].view(2, 1).t()
    a.mul_(2)  # writes y[0], y[1] through a
    (b.sum() + t.sum()).backward()
    assert x.grad.tolist() == [0.0, 4.0, 2.0]  # d/dx of 2*(2 x1) + 2*x2: y[1] was doubled, y[2] not


def test_a_custom_function_marking_a_view_dirty_rebases_its_base_and_regenerates_views():
    class Double(autograd.Function):
        @staticmethod
        def forward(ctx, v):
            ctx.mark_dirty(v)
            v.mul_(2)
            return v

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = leaf([1.0, 2.0, 3.0])
    y = x * 1
    other = y[1:]
    Double.apply(y[:2])  # through a view: the base and its other views see it
    (y.sum() + other.sum()).backward()
    assert x.grad.tolist() == [2.0, 4.0, 2.0]  # PyTorch's
    x = leaf([1.0, 2.0, 3.0])
    y = x * 1
    v = y[:2]
    Double.apply(y)  # on the base: the view made before sees it
    v.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 0.0]


def test_a_view_of_a_leaf_keeps_its_history_and_the_registry_forgets_dead_views():
    x = leaf([1.0, 2.0])
    for _ in range(100):
        x[:1].sum()  # views of a leaf: nothing to regenerate, nothing remembered
    assert "_views" not in x.__dict__
    y = x * 1
    for _ in range(100):
        y[:1]
    assert len(y.__dict__["_views"]) <= 33


def test_in_place_op_without_formula_on_a_leaf_raises_pytorchs_error():
    # an op with no backward formula reaches the Autograd fallback, which must guard writes the same way
    from tensorplug.library import Library
    lib = Library("inplace_noformula", "DEF")
    lib.define("bump_(Tensor(a!) self) -> Tensor(a!)")
    lib.impl("bump_", lambda s: s, "CompositeExplicitAutograd")
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        tp.ops.inplace_noformula.bump_(x)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used"):
        tp.ops.inplace_noformula.bump_(x[:1])


def test_in_place_on_a_non_leaf_is_recorded():
    x = leaf([1.0, 2.0])
    y = x * 1
    y.mul_(x * 1)
    y.add_(x)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 5.0])  # d(x^2 + x)/dx


def test_in_place_through_a_view_reaches_the_base():
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    y = x * 1
    y[0].mul_(10)
    y.t()[1].add_(y[1])  # column 1 += row 1, written through a transposed view
    np.testing.assert_allclose(y.detach().numpy(), [[10.0, 23.0], [3.0, 8.0]])
    y.sum().backward()
    # y = [[10 x00, 10 x01 + x10], [x10, 2 x11]]
    np.testing.assert_allclose(x.grad.numpy(), [[10.0, 10.0], [2.0, 2.0]])


def test_modifying_a_saved_tensor_is_detected():
    x = leaf([1.0, 2.0])
    y = x * 1
    z = y * y
    y.add_(1)
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation.*is at version 1; expected "
                                           r"version 0 instead"):
        z.sum().backward()


def test_modifying_a_saved_output_is_detected():
    x = leaf([0.5])
    z = x.exp()  # ExpBackward0 keeps its output
    z.add_(1)
    with pytest.raises(RuntimeError, match="output 0 of ExpBackward0, is at version 1; expected version 0"):
        z.sum().backward()


def test_detach_shares_data_but_not_history():
    x = leaf([1.0])
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None and d._base is None
    d.add_(1)
    assert y.item() == 3.0
    y2 = x * 2
    y2.detach_()
    assert y2.is_leaf and not y2.requires_grad


def test_requires_grad_only_for_floating_dtypes():
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        tp.tensor([1, 2]).requires_grad_()


def test_gradients_keep_the_input_dtype():
    x = tp.tensor([1.0, 2.0], dtype=tp.float16, requires_grad=True)
    w = tp.tensor([3.0, 4.0], dtype=tp.float32)
    (x * w).sum().backward()
    assert x.grad.dtype == tp.float16
    np.testing.assert_allclose(x.grad.float().numpy(), [3.0, 4.0])


# -- custom Function ------------------------------------------------------------------------
class Cube(autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.save_for_backward(x)
        ctx.k = k
        return x * x * x * k

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        assert ctx.needs_input_grad == (True, False)
        return grad * 3 * x * x * ctx.k, None


def test_custom_function_forward_and_backward():
    x = leaf([1.0, 2.0])
    y = Cube.apply(x, 2.0)
    assert y.grad_fn.name() == "CubeBackward"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 24.0])
    assert autograd.gradcheck(lambda t: Cube.apply(t, 0.5), (leaf([0.3, -1.2]),))


def test_custom_function_non_differentiable_outputs_and_saved_check():
    class SortPair(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            v, i = x.sort()
            ctx.mark_non_differentiable(i)
            ctx.save_for_backward(i)
            return v, i

        @staticmethod
        def backward(ctx, gv, gi):
            (i,) = ctx.saved_tensors
            return tp.zeros_like(gv).scatter(0, i, gv)

    x = leaf([3.0, 1.0, 2.0])
    v, i = SortPair.apply(x)
    assert v.requires_grad and not i.requires_grad
    (v * tp.tensor([1.0, 2.0, 3.0], dtype=tp.float64)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 1.0, 2.0])


def test_custom_function_wrong_number_of_gradients():
    class Bad(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g, g

    with pytest.raises(RuntimeError, match="returned an incorrect number of gradients"):
        Bad.apply(leaf([1.0])).sum().backward()


# -- gradcheck and anomaly -------------------------------------------------------------------
def test_gradcheck_catches_a_wrong_formula():
    class Wrong(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x  # should be 2x

    with pytest.raises(autograd.GradcheckError, match="Jacobian mismatch"):
        autograd.gradcheck(Wrong.apply, (leaf([1.0, 2.0]),))
    assert autograd.gradcheck(Wrong.apply, (leaf([1.0, 2.0]),), raise_exception=False) is False


def test_anomaly_mode_names_the_node_and_its_forward_stack():
    class NaNGrad(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g * float("nan")

    x = leaf([1.0])
    with autograd.detect_anomaly():
        y = NaNGrad.apply(x)
        with pytest.warns(RuntimeWarning, match="Traceback of forward call"):
            with pytest.raises(RuntimeError, match="Function 'NaNGradBackward' returned nan values in its 0th"):
                y.sum().backward()
    assert not autograd.is_anomaly_enabled()


def test_missing_formula_raises_at_backward_naming_the_op():
    lib = tp.library.Library("agtest", "DEF")
    try:
        lib.define("twice(Tensor x) -> Tensor")
        lib.impl("twice", lambda x: tp.from_numpy(x.detach().numpy() * 2), "CPU")
        x = leaf([1.0])
        y = tp.ops.agtest.twice(x)
        assert y.requires_grad
        with pytest.raises(NotImplementedError, match="the derivative for 'agtest::twice' is not implemented"):
            y.sum().backward()
    finally:
        lib._destroy()


# -- functional API -----------------------------------------------------------------------------
def test_func_grad_and_vjp():
    f = lambda x: (x * x * x).sum()  # noqa: E731
    x = tp.tensor([1.0, 2.0], dtype=tp.float64)
    np.testing.assert_allclose(tp.func.grad(f)(x).numpy(), [3.0, 12.0])
    np.testing.assert_allclose(tp.func.grad(lambda t: tp.func.grad(f)(t).sum())(x).numpy(), [6.0, 12.0])
    g, aux = tp.func.grad(lambda a, b: ((a * b).sum(), {"aux": a}), argnums=1, has_aux=True)(x, x * 2)
    assert list(aux) == ["aux"] and not aux["aux"].requires_grad
    np.testing.assert_allclose(g.numpy(), [1.0, 2.0])
    out, vjp_fn = tp.func.vjp(lambda a: a * a, x)
    (v,) = vjp_fn(tp.ones(2, dtype=tp.float64))
    np.testing.assert_allclose(out.numpy(), [1.0, 4.0])
    np.testing.assert_allclose(v.numpy(), [2.0, 4.0])
    assert not out.requires_grad and not v.requires_grad
    with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a scalar Tensor"):
        tp.func.grad(lambda t: t * 2)(x)


def test_as_strided_backward_adds_overlapping_elements():
    x = leaf([0.0, 1.0, 2.0, 3.0, 4.0])
    x.as_strided((3, 3), (1, 1)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 2.0, 3.0, 2.0, 1.0])
    assert autograd.gradcheck(lambda t: t.as_strided((2, 2), (3, 1), 1) * 2, (leaf([0.0] * 6),))


def test_node_scopes_enclose_each_backward_node():
    import contextlib
    from tensorplug.autograd.graph import NODE_SCOPES
    seen = []

    @contextlib.contextmanager
    def scope(node):
        seen.append(("enter", node.name()))
        yield
        seen.append(("exit", node.name()))

    x = leaf([1.0, 2.0])
    y = (x * 3).sum()
    NODE_SCOPES.append(scope)
    try:
        y.backward()
    finally:
        NODE_SCOPES.remove(scope)
    assert seen == [("enter", "SumBackward0"), ("exit", "SumBackward0"),
                    ("enter", "MulBackward0"), ("exit", "MulBackward0")]
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_derivative_registers_a_formula_for_a_plugins_own_operator():
    from tensorplug.autograd import derivative
    from tensorplug.library import Library
    lib = Library("formulatest", "DEF")
    lib.define("cube(Tensor self) -> Tensor")
    lib.impl("cube", lambda x: x * x * x, "CompositeExplicitAutograd")

    @derivative("formulatest::cube")
    def _(grad, self):
        return 3 * grad * self * self

    x = tp.tensor([1.0, 2.0], requires_grad=True)
    y = tp.ops.formulatest.cube(x)
    y.sum().backward()
    assert y.grad_fn.name() == "CubeBackward0" and x.grad.tolist() == [3.0, 12.0]
    with pytest.raises(RuntimeError, match="already registered"):
        derivative("formulatest::cube")(lambda grad, self: grad)


def test_leaf_accumulator_is_shared_while_a_graph_lives_and_kept_weakly():
    import gc
    import weakref
    x = tp.ones(3, requires_grad=True)
    y = tp.ones(3, requires_grad=True)
    a = x + y
    b = x * 2
    acc = a.grad_fn.next_functions[0][0]
    assert type(acc).__name__ == "AccumulateGrad" and acc.variable is x
    assert b.grad_fn.next_functions[0][0] is acc  # one accumulator per leaf while a graph holds it
    assert "_grad_accumulator" not in x.__dict__ and "_grad_acc" not in x.__dict__
    ref = weakref.ref(acc)
    del a, b, acc
    gc.collect()
    assert ref() is None  # the leaf does not keep its accumulator alive
    c = x + y
    assert c.grad_fn.next_functions[0][0].variable is x
    c.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]
