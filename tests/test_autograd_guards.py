"""Guards PyTorch has around gradients: hooks that change a gradient's kind, ``.grad`` assignment,
grad-mode decorators on generators, and ``.data``'s own version counter."""
from __future__ import annotations

import pytest

import tensorplug as tp


def leaf(*values):
    return tp.tensor(list(values), requires_grad=True)


# -- gradient hooks -------------------------------------------------------------------------------
@pytest.mark.parametrize("on_leaf", [False, True], ids=["non-leaf", "leaf"])
def test_a_hook_may_not_change_the_size_of_the_gradient(on_leaf):
    x = leaf(1.0, 2.0)
    y = x * 2

    def widen(g):
        return tp.zeros(3)
    (x if on_leaf else y).register_hook(widen)
    with pytest.raises(RuntimeError, match="^hook 'widen' has changed the size of value$"):
        y.sum().backward()


@pytest.mark.parametrize("on_leaf", [False, True], ids=["non-leaf", "leaf"])
def test_a_hook_may_not_change_the_dtype_of_the_gradient(on_leaf):
    x = leaf(1.0, 2.0)
    y = x * 2
    (x if on_leaf else y).register_hook(lambda g: g.double())
    with pytest.raises(RuntimeError, match=r"hook '<lambda>' has changed the type of value \(was "
                                           r"tensorplug.FloatTensor got tensorplug.DoubleTensor\)"):
        y.sum().backward()


def test_a_hook_must_return_a_tensor_or_none():
    x = leaf(1.0)
    x.register_hook(lambda g: 5)
    with pytest.raises(TypeError, match="expected Variable, but hook returned 'int'"):
        (x * 2).sum().backward()


def test_a_hook_returning_a_gradient_of_the_same_kind_replaces_it():
    x = leaf(1.0, 2.0)
    y = x * 2
    y.register_hook(lambda g: g * 10)
    y.sum().backward()
    assert x.grad.tolist() == [20.0, 20.0]


# -- assigning .grad --------------------------------------------------------------------------------
def test_assigning_a_grad_of_another_size_raises_pytorchs_error():
    x = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match=r"attempting to assign a gradient of size '\[3\]' to a tensor of "
                                           r"size '\[2\]'. Please ensure that the gradient and the tensor are "
                                           r"the same size"):
        x.grad = tp.zeros(3)
    assert x.grad is None


@pytest.mark.parametrize("dtype,c_name", [(tp.float64, "double"), (tp.float16, "c10::Half"), (tp.int64, "long int")])
def test_assigning_a_grad_of_another_dtype_raises_pytorchs_error(dtype, c_name):
    x = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match=f"attempting to assign a gradient with dtype '{c_name}' to a tensor "
                                           f"with grad_dtype 'Float'. The gradient must match"):
        x.grad = tp.zeros(2, dtype=dtype)


def test_assigning_a_grad_on_another_device_raises_pytorchs_error():
    x = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match="attempting to assign a gradient with device type 'minimal' to a tensor "
                                           "with device type 'cpu'. Please ensure that the gradient and the "
                                           "tensor are on the same device"):
        x.grad = tp.zeros(2, device="minimal")


def test_assigning_a_matching_grad_or_none_works():
    x = leaf(1.0, 2.0)
    g = tp.ones(2)
    x.grad = g
    assert x.grad is g
    x.grad = None
    assert x.grad is None
    with pytest.raises(TypeError, match="assigned grad expected to be a Tensor or None but got int"):
        x.grad = 3


# -- grad-mode decorators on generator functions ------------------------------------------------------
@pytest.mark.parametrize("decorator,inside", [
    (lambda: tp.no_grad(), False),
    (lambda: tp.set_grad_enabled(False), False),
    (lambda: tp.inference_mode(), False),
])
def test_a_decorated_generator_runs_each_step_in_the_mode_and_the_caller_keeps_its_own(decorator, inside):
    @decorator()
    def steps():
        got = yield tp.is_grad_enabled()
        yield (got, tp.is_grad_enabled())

    gen = steps()
    assert next(gen) is inside
    assert tp.is_grad_enabled()  # between steps the caller's mode holds
    assert gen.send("x") == ("x", inside)
    assert tp.is_grad_enabled()


def test_enable_grad_decorating_a_generator_applies_inside_no_grad():
    @tp.enable_grad()
    def steps():
        yield tp.is_grad_enabled()

    with tp.no_grad():
        gen = steps()
        assert next(gen) is True
        assert not tp.is_grad_enabled()


def test_a_decorated_generator_sees_exceptions_thrown_in_and_returns_its_value():
    @tp.no_grad()
    def steps():
        try:
            yield 1
        except ValueError:
            yield tp.is_grad_enabled()
        return "done"

    gen = steps()
    assert next(gen) == 1
    assert gen.throw(ValueError("x")) is False
    with pytest.raises(StopIteration) as stop:
        next(gen)
    assert stop.value.value == "done"


# -- .data ---------------------------------------------------------------------------------------
def test_writes_through_data_do_not_bump_the_version_counter():
    x = leaf(1.0, 2.0)
    y = x * x  # saves x
    v = x._version
    x.data.mul_(3)
    assert x._version == v
    y.sum().backward()  # no "modified by an inplace operation" error, as in PyTorch
    assert x.grad.tolist() == [6.0, 12.0]
    d = x.detach()
    with tp.no_grad():
        d.add_(1)  # detach() shares the counter, .data does not
    assert x._version == v + 1


def test_data_still_aliases_for_the_overlap_check():
    x = tp.arange(4.0)
    with pytest.raises(RuntimeError, match="unsupported operation: some elements of the input tensor"):
        x[1:].copy_(x.data[:-1])
