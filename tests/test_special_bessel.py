"""The random in-place fills (exponential_, geometric_, cauchy_, log_normal_) and the Bessel, Airy and
incomplete gamma functions of tensorplug.special: values against hand-computed ones and the defining
identities, special values, dtypes, gradients and PyTorch's errors."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import tensorplug as tp

N = 200_000


# -- random fills ------------------------------------------------------------------------------------------
FILLS = [
    ("exponential_", (2.0,)),
    ("geometric_", (0.3,)),
    ("cauchy_", (1.0, 0.5)),
    ("log_normal_", (0.5, 0.25)),
]


@pytest.mark.parametrize("name,args", FILLS, ids=[f[0] for f in FILLS])
def test_fills_are_reproducible_in_place_and_follow_the_generator(name, args):
    x = tp.zeros(6, dtype=tp.float64)
    assert getattr(x, name)(*args) is x
    a = getattr(tp.zeros(50), name)(*args, generator=tp.Generator().manual_seed(5)).numpy()
    b = getattr(tp.zeros(50), name)(*args, generator=tp.Generator().manual_seed(5)).numpy()
    c = getattr(tp.zeros(50), name)(*args, generator=tp.Generator().manual_seed(6)).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    tp.manual_seed(11)
    d = getattr(tp.zeros(50), name)(*args).numpy()
    tp.manual_seed(11)
    np.testing.assert_array_equal(d, getattr(tp.zeros(50), name)(*args).numpy())


def test_fill_distributions():
    g = tp.Generator().manual_seed(0)
    e = tp.empty(N, dtype=tp.float64).exponential_(2.0, generator=g).numpy()
    assert e.min() > 0 and abs(e.mean() - 0.5) < 0.01 and abs(e.std() - 0.5) < 0.01
    k = tp.empty(N, dtype=tp.int64).geometric_(0.25, generator=g).numpy()
    assert k.min() == 1 and abs(k.mean() - 4.0) < 0.05  # trials up to the first success: mean 1/p
    c = tp.empty(N, dtype=tp.float64).cauchy_(1.0, 0.5, generator=g).numpy()
    assert abs(np.median(c) - 1.0) < 0.01
    assert abs(np.quantile(c, 0.75) - 1.5) < 0.02  # the quartiles are median +- sigma
    ln = tp.empty(N, dtype=tp.float64).log_normal_(0.5, 0.25, generator=g).numpy()
    assert ln.min() > 0 and abs(np.log(ln).mean() - 0.5) < 0.01 and abs(np.log(ln).std() - 0.25) < 0.01


def test_fill_defaults_dtypes_and_keywords():
    tp.manual_seed(0)
    ln = tp.empty(N).log_normal_().numpy()  # mean=1, std=2 of the underlying normal
    assert abs(np.median(np.log(ln)) - 1.0) < 0.03
    assert tp.empty(3, dtype=tp.float16).exponential_().dtype is tp.float16
    assert tp.empty(3, dtype=tp.bfloat16).cauchy_(median=2.0, sigma=3.0).dtype is tp.bfloat16
    for d in (tp.int8, tp.uint8, tp.int32, tp.float32):
        v = tp.empty(100, dtype=d).geometric_(p=0.5)
        assert v.dtype is d and (v.numpy() >= 1).all()
    assert (tp.empty(4).exponential_(lambd=float("inf")).numpy() == 0).all()


def _err(exc, msg):
    return exc, re.escape(msg)


ERRORS = [
    (lambda: tp.zeros(3).exponential_(0), _err(RuntimeError, "exponential_ expects lambda > 0.0, but found lambda=0")),
    (lambda: tp.zeros(3).exponential_(float("nan")),
     _err(RuntimeError, "exponential_ expects lambda > 0.0, but found lambda=nan")),
    (lambda: tp.zeros(3, dtype=tp.int64).exponential_(),
     _err(RuntimeError, "Exponential distribution is a continuous probability distribution. dtype must be a "
                        "floating point but you specified Long")),
    (lambda: tp.zeros(3).geometric_(0), _err(RuntimeError, "geometric_ expects p to be in (0, 1), but got p=0")),
    (lambda: tp.zeros(3).geometric_(1.5), _err(RuntimeError, "geometric_ expects p to be in (0, 1), but got p=1.5")),
    (lambda: tp.zeros(3, dtype=tp.bool).geometric_(0.5),
     _err(NotImplementedError, "\"geometric_cpu\" not implemented for 'Bool'")),
    (lambda: tp.zeros(3).cauchy_(0, 0), _err(RuntimeError, "cauchy_ expects sigma > 0.0, but found sigma=0")),
    (lambda: tp.zeros(3, dtype=tp.int8).cauchy_(),
     _err(RuntimeError, "Cauchy distribution is a continuous probability distribution. dtype must be a floating "
                        "point but you specified signed char")),
    (lambda: tp.zeros(3).log_normal_(0, -1), _err(RuntimeError, "log_normal_ expects std > 0.0, but found std=-1")),
    (lambda: tp.zeros(3, dtype=tp.int32).log_normal_(),
     _err(NotImplementedError, "\"log_normal_cpu\" not implemented for 'Int'")),
    (lambda: tp.zeros(3).exponential_(generator=3),
     _err(TypeError, "exponential_(): argument 'generator' must be tensorplug.Generator, not int")),
    (lambda: tp.zeros(3).expand(2, 3).cauchy_(), (RuntimeError, "more than one element of the written-to tensor")),
]


@pytest.mark.parametrize("call,err", ERRORS)
def test_fill_errors(call, err):
    exc, msg = err
    with pytest.raises(exc, match=msg):
        call()


def test_fills_give_zero_gradients_and_batch_under_vmap():
    from tensorplug.func import vmap

    x = tp.ones(4, requires_grad=True)
    y = x * 1.0
    y.exponential_()
    (g,) = tp.autograd.grad(y.sum(), x)
    assert (g.numpy() == 0).all()
    out = vmap(lambda t: t.clone().geometric_(0.5), randomness="different")(tp.zeros(3, 40))
    assert out.shape == (3, 40) and not np.array_equal(out[0].numpy(), out[1].numpy())
    same = vmap(lambda t: t.clone().log_normal_(), randomness="same")(tp.zeros(3, 5))
    np.testing.assert_array_equal(same[0].numpy(), same[2].numpy())
