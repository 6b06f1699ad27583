"""Adam and AdamW update a group's parameters in one multi-tensor op (``_fused_adam_``/``_fused_adamw_``):
the CPU kernel agrees bit for bit with the one-op-at-a-time loop (the op's composite, which every other
backend runs), half precision with ``fused=True`` is updated in float32 and rounded once, and PyTorch's
``foreach``/``fused``/``capturable``/``differentiable`` arguments are accepted or refused as PyTorch does."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
from tensorplug.ops import optim_ops as O


def _params(dtype):
    tp.manual_seed(0)
    return [tp.randn(7, 5, dtype=dtype).requires_grad_(), tp.randn(3, dtype=dtype).requires_grad_(),
            tp.randn(4, 6, dtype=dtype).t().requires_grad_()]  # a transposed (non-contiguous) parameter


def _grads(ps, i):
    tp.manual_seed(100 + i)
    return [tp.randn(*p.shape, dtype=p.dtype) for p in ps]


def _loop_reference(ps, steps, make, **kw):
    """The same updates through the composite loop (what a backend without the fused kernel runs)."""
    opt = make(ps, **kw)
    g = opt.param_groups[0]
    loop = O.adamw_loop if g["decoupled_weight_decay"] else O.adam_loop
    with tp.no_grad():
        for i in range(steps):
            grads = _grads(ps, i)
            st = [opt._state_for(p, g["amsgrad"]) for p in ps]
            for s in st:
                s["step"].add_(1)
            loop(ps, grads, [s["exp_avg"] for s in st], [s["exp_avg_sq"] for s in st],
                 [s["max_exp_avg_sq"] for s in st] if g["amsgrad"] else [], [s["step"] for s in st],
                 lr=g["lr"], beta1=g["betas"][0], beta2=g["betas"][1], eps=g["eps"],
                 weight_decay=g["weight_decay"], amsgrad=g["amsgrad"], maximize=g["maximize"])
    return [p.detach().numpy().copy() for p in ps]


def _stepped(ps, steps, make, **kw):
    opt = make(ps, **kw)
    for i in range(steps):
        for p, g in zip(ps, _grads(ps, i)):
            p.grad = g
        opt.step()
    return [p.detach().numpy().copy() for p in ps], opt


OPTIONS = [({}, tp.optim.Adam), ({}, tp.optim.AdamW), ({"weight_decay": 0.1}, tp.optim.Adam),
           ({"amsgrad": True, "weight_decay": 0.2}, tp.optim.AdamW), ({"maximize": True}, tp.optim.Adam),
           ({"betas": (0.3, 0.9), "eps": 1e-3}, tp.optim.AdamW)]


@pytest.mark.parametrize("dtype", [tp.float32, tp.float64])
@pytest.mark.parametrize("kw,make", OPTIONS)
def test_the_one_call_update_is_the_loops_bit_for_bit(kw, make, dtype):
    got, _ = _stepped(_params(dtype), 4, make, lr=1e-2, **kw)
    want = _loop_reference(_params(dtype), 4, make, lr=1e-2, **kw)
    for a, b in zip(got, want):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    assert not np.array_equal(got[0], _params(dtype)[0].detach().numpy())  # the parameters did move


@pytest.mark.parametrize("dtype", [tp.bfloat16, tp.float16])
def test_fused_half_precision_is_updated_in_float32_and_rounded_once(dtype):
    ps = _params(dtype)
    ref = [p.detach().float().requires_grad_() for p in ps]
    got, opt = _stepped(ps, 1, tp.optim.AdamW, lr=1e-2, fused=True)
    grads32 = [g.float() for g in _grads(ps, 0)]
    ropt = tp.optim.AdamW(ref, lr=1e-2)
    for p, g in zip(ref, grads32):
        p.grad = g
    ropt.step()
    for a, r in zip(ps, ref):
        assert a.dtype is dtype and a.detach().float().tolist() == r.detach().to(dtype).float().tolist()
    assert opt.state[ps[0]]["exp_avg"].dtype is dtype


def test_half_precision_without_fused_takes_the_loop():
    ps = _params(tp.bfloat16)
    got, _ = _stepped(ps, 2, tp.optim.Adam, lr=1e-2)
    want = _loop_reference(_params(tp.bfloat16), 2, tp.optim.Adam, lr=1e-2)
    for a, b in zip(got, want):
        assert np.array_equal(a.astype(np.float32), b.astype(np.float32))


def test_a_step_bumps_the_parameters_versions():
    ps = _params(tp.float32)
    before = [p._version for p in ps]
    _stepped(ps, 1, tp.optim.Adam)
    assert all(p._version > v for p, v in zip(ps, before))


def test_pytorchs_arguments():
    p = [tp.zeros(2, requires_grad=True)]
    opt = tp.optim.AdamW(p, foreach=False, capturable=False, fused=None)
    assert {"foreach", "fused", "capturable", "differentiable"} <= set(opt.param_groups[0])
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together."):
        tp.optim.Adam(p, fused=True, foreach=True)
    with pytest.raises(RuntimeError, match="`fused` does not support `differentiable`"):
        tp.optim.Adam(p, fused=True, differentiable=True)
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        tp.optim.AdamW(p, differentiable=True)


def test_the_op_checks_its_lists():
    p, g = [tp.zeros(3)], [tp.zeros(3)]
    kw = dict(lr=0.1, beta1=0.9, beta2=0.99, weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False)
    with pytest.raises(RuntimeError, match="exp_avgs has 0 entries for 1 parameters"):
        O.fused_adam_(p, g, [], [tp.zeros(3)], [], [tp.tensor(1.0)], **kw)
    with pytest.raises(RuntimeError, match=r"exp_avg_sqs\[0\] has shape \[2\], the parameter \[3\]"):
        O.fused_adam_(p, g, [tp.zeros(3)], [tp.zeros(2)], [], [tp.tensor(1.0)], **kw)
    with pytest.raises(RuntimeError, match=r"grads\[0\] is float64, the parameter float32"):
        O.fused_adamw_(p, [tp.zeros(3, dtype=tp.float64)], [tp.zeros(3)], [tp.zeros(3)], [], [tp.tensor(1.0)], **kw)


# -- SGD ---------------------------------------------------------------------------------------------
SGD_OPTIONS = [{}, {"momentum": 0.9}, {"momentum": 0.9, "nesterov": True, "weight_decay": 0.1},
               {"momentum": 0.5, "dampening": 0.3, "maximize": True}, {"weight_decay": 0.2, "maximize": True}]


def _sgd_loop_reference(ps, steps, **kw):
    """The same updates through ``_fused_sgd_``'s composite loop, the one other backends run."""
    opt = tp.optim.SGD(ps, **kw)
    g = opt.param_groups[0]
    args = {k: g[k] for k in ("weight_decay", "momentum", "lr", "dampening", "nesterov", "maximize")}
    bufs = [tp.empty_like(p) for p in ps] if g["momentum"] != 0 else []
    with tp.no_grad():
        for i in range(steps):
            O.sgd_loop(ps, _grads(ps, i), bufs, is_first_step=i == 0, **args)
    return [p.detach().numpy().copy() for p in ps]


@pytest.mark.parametrize("dtype", [tp.float32, tp.float64])
@pytest.mark.parametrize("kw", SGD_OPTIONS, ids=str)
def test_the_one_call_sgd_update_is_the_loops_bit_for_bit(kw, dtype):
    kw = dict(kw, lr=0.1)
    got, opt = _stepped(_params(dtype), 4, tp.optim.SGD, **kw)
    want = _sgd_loop_reference(_params(dtype), 4, **kw)
    for a, b in zip(got, want):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    if kw.get("momentum"):
        assert all("momentum_buffer" in opt.state[p] for p in opt.param_groups[0]["params"])


def test_the_one_call_sgd_update_is_one_dispatch_per_group():
    calls = []
    ps = _params(tp.float32)
    opt = tp.optim.SGD(ps, lr=0.1, momentum=0.9)
    for p, g in zip(ps, _grads(ps, 0)):
        p.grad = g
    real = O.fused_sgd_
    import tensorplug.optim.sgd as S
    S._ops.fused_sgd_ = lambda *a, **k: calls.append(len(a[0])) or real(*a, **k)
    try:
        opt.step()
        opt.step()
    finally:
        S._ops.fused_sgd_ = real
    assert calls == [3, 3]


def test_half_sgd_with_fused_is_updated_in_float32_and_rounded_once():
    ps = _params(tp.float16)
    got, _ = _stepped(ps, 3, tp.optim.SGD, lr=0.1, momentum=0.9, fused=True)
    ref32 = [p.detach().float().requires_grad_() for p in _params(tp.float16)]
    opt = tp.optim.SGD(ref32, lr=0.1, momentum=0.9)
    for i in range(3):
        for p, g in zip(ref32, _grads(_params(tp.float16), i)):
            p.grad = g.float()
        opt.step()
        for p in ref32:  # the parameter is rounded to float16 after each step, the buffer too
            p.data = p.data.half().float()
            st = opt.state[p]["momentum_buffer"]
            st.copy_(st.half().float())
    for a, b in zip(got, ref32):
        np.testing.assert_array_equal(a, b.detach().half().numpy())


def test_sgd_takes_pytorchs_arguments_and_refusals():
    p = [tp.zeros(2, requires_grad=True)]
    tp.optim.SGD(p, lr=0.1, foreach=True)
    tp.optim.SGD(p, lr=0.1, fused=False, differentiable=False)
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together."):
        tp.optim.SGD(p, lr=0.1, fused=True, foreach=True)
    with pytest.raises(RuntimeError, match="`fused` does not support `differentiable`"):
        tp.optim.SGD(p, lr=0.1, fused=True, differentiable=True)
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        tp.optim.SGD(p, lr=0.1, differentiable=True)


def test_the_sgd_op_checks_its_lists():
    p = [tp.zeros(2), tp.zeros(3)]
    kw = {"weight_decay": 0.0, "momentum": 0.9, "lr": 0.1, "dampening": 0.0, "nesterov": False, "maximize": False,
          "is_first_step": True}
    with pytest.raises(RuntimeError, match="_fused_sgd_: grads has 1 entries for 2 parameters"):
        tp.ops.tensorplug._fused_sgd_(p, [tp.zeros(2)], [tp.zeros(2), tp.zeros(3)], **kw)
    with pytest.raises(RuntimeError, match=r"_fused_sgd_: momentum_buffer_list\[1\] has shape \[2\], the "
                                           r"parameter \[3\]"):
        tp.ops.tensorplug._fused_sgd_(p, [tp.zeros(2), tp.zeros(3)], [tp.zeros(2), tp.zeros(2)], **kw)
    with pytest.raises(RuntimeError, match="a floating point dtype is needed"):
        tp.ops.tensorplug._fused_sgd_([tp.zeros(2, dtype=tp.int64)], [tp.zeros(2, dtype=tp.int64)],
                                      [tp.zeros(2, dtype=tp.int64)], **kw)
