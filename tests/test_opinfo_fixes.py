"""Behaviours fixed so that PyTorch's OpInfo samples pass (issue 13): each test fails on the code before."""

from __future__ import annotations

import pytest

import tensorplug as tp


@pytest.mark.parametrize("name", ["eq", "ne", "lt", "le", "gt", "ge", "less", "greater_equal", "fmod", "rsub",
                                  "copysign"])
def test_number_first_argument_is_a_type_error(name):
    t = tp.ones(2)
    with pytest.raises(TypeError, match="received an invalid combination of arguments - got \\(int, Tensor\\)"):
        getattr(tp, name)(2, t)
    getattr(tp, name)(t, 2)  # a number second is fine


@pytest.mark.parametrize("name", ["add", "sub", "mul", "floor_divide"])
def test_number_first_argument_still_accepted_where_pytorch_accepts_it(name):
    assert getattr(tp, name)(2, tp.ones(2)).shape == (2,)


def test_tensordot_broadcasts_a_contracted_dim_of_size_one():
    a = tp.arange(6.0).reshape((1, 2, 3))
    b = tp.arange(8.0).reshape((2, 2, 2))
    out = tp.tensordot(a, b, dims=([0, 1], [2, 0]))
    # a's dim 0 (size 1) against b's dim 2 (size 2): b is summed over that dim
    want = tp.tensordot(a, b.sum((2,), True), dims=([0, 1], [2, 0]))
    assert out.shape == (3, 2)
    assert tp.allclose(out, want)
    with pytest.raises(RuntimeError, match="contracted dimensions need to match, but first has size 3 in dim 0 "
                                           "and second has size 2 in dim 0"):
        tp.tensordot(tp.ones(3, 3), tp.ones(2, 3), ([0], [0]))


def test_float32_trigamma_follows_pytorchs_float32_kernel_at_and_near_the_poles():
    # PyTorch's float32 kernel computes sin(pi x) in float32: finite at the negative integers, and
    # 412.75259 (not the exact 412.74422) at -7.9505868
    x = tp.tensor([-7.950586795806885, -1.0, -2.0, 0.0, 1.0])
    got = tp.polygamma(1, x).tolist()
    assert got[0] == pytest.approx(412.7525939941406, rel=1e-7)
    assert got[1] == pytest.approx(1291369695936512.0, rel=1e-6)
    assert got[2] == pytest.approx(322842423984128.0, rel=1e-6)
    assert got[3] == float("inf")
    assert got[4] == pytest.approx(1.644934058189392, rel=1e-7)
    # float64 stays exact
    assert tp.polygamma(1, tp.tensor([1.0], dtype=tp.float64)).item() == pytest.approx(1.6449340668482264, rel=1e-14)


def test_pinv_takes_rcond_positionally_as_rtol():
    A = tp.tensor([[2.0, 0.0], [0.0, 0.1]], dtype=tp.float64)
    want = tp.linalg.pinv(A, rtol=0.5)
    assert tp.allclose(tp.linalg.pinv(A, 0.5), want)
    assert tp.allclose(tp.linalg.pinv(A, rcond=0.5), want)
    assert tp.linalg.pinv(A, 0.5).tolist() == [[0.5, 0.0], [0.0, 0.0]]
    # a tensor rcond per matrix of the batch
    B = tp.stack([A, A])
    out = tp.linalg.pinv(B, tp.tensor([0.5, 0.01], dtype=tp.float64))
    assert out[0].tolist() == [[0.5, 0.0], [0.0, 0.0]]
    assert tp.allclose(out[1], tp.tensor([[0.5, 0.0], [0.0, 10.0]], dtype=tp.float64))
    assert tp.allclose(tp.linalg.pinv(A, 0.5, True), want)
    with pytest.raises(TypeError):
        tp.linalg.pinv(A, 0.5, atol=0.1)


def test_lstsq_empty_residuals_are_a_differentiable_result():
    A = tp.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]], dtype=tp.float64, requires_grad=True)
    B = tp.tensor([[1.0], [2.0], [2.0]], dtype=tp.float64)
    X, res, _, _ = tp.linalg.lstsq(A, B)  # gelsy: no residuals
    assert res.shape == (0,) and res.dtype is tp.float64
    assert res.requires_grad
    g, = tp.autograd.grad((X.sum(), res.sum()), (A,))
    assert g.shape == (3, 2)
    X, res, _, _ = tp.linalg.lstsq(A.detach(), B)
    assert not res.requires_grad


def test_clamp_min_and_clamp_max_take_bool_tensors():
    b = tp.tensor([True, False])
    assert tp.clamp_min(b, tp.tensor(True)).tolist() == [True, True]
    assert tp.clamp_max(b, tp.tensor(False)).tolist() == [False, False]
    assert tp.clamp_min(b, tp.tensor([[False], [True]])).tolist() == [[True, False], [True, True]]
    c = b.clone()
    assert c.clamp_min_(tp.tensor(True)) is c and c.tolist() == [True, True]
    assert tp.clamp(b, tp.tensor(True)).dtype is tp.bool  # one tensor bound: clamp_min
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        tp.clamp(b, tp.tensor(False), tp.tensor(True))  # both bounds: PyTorch's clamp refuses bool


@pytest.mark.parametrize("name", ["fft2", "fftn", "ifft2", "ifftn", "rfft2", "rfftn", "irfft2", "irfftn"])
def test_nd_fft_of_a_0d_input_names_the_dim(name):
    with pytest.raises(IndexError, match="Dimension specified as 0 but tensor has no dimensions"):
        getattr(tp.fft, name)(tp.tensor(1.0), dim=(0,))
    with pytest.raises(IndexError, match="Dimension specified as -2 but tensor has no dimensions"):
        getattr(tp.fft, name)(tp.tensor(1.0), dim=(-2, -1))


def test_pool_and_conv_errors_in_pytorchs_words():
    F = tp.nn.functional
    x1, x2 = tp.ones(1, 1, 6), tp.ones(1, 1, 6, 6)
    cases = [
        (lambda: F.avg_pool2d(x2, 2, padding=-1), RuntimeError, "pad must be non-negative, but got pad: -1"),
        (lambda: F.max_pool2d(x2, 2, padding=-1), RuntimeError, "pad must be non-negative, but got pad: -1"),
        (lambda: F.max_pool1d(x1, 2, padding=-1), RuntimeError, r"max_pool1d\(\) padding must be non-negative, but got -1"),
        (lambda: F.avg_pool1d(x1, 2, padding=2), RuntimeError,
         "pad should be at most half of effective kernel size, but got pad=2, kernel_size=2 and dilation=1"),
        # the padding is checked before the input's empty dims
        (lambda: F.avg_pool3d(tp.ones(0, 1, 49, 50), 2, 50, 4), RuntimeError,
         "pad should be at most half of effective kernel size, but got pad=4"),
        (lambda: F.max_pool3d(tp.ones(0, 1, 49, 50), 2, 50, 4), RuntimeError,
         "pad should be at most half of effective kernel size, but got pad=4"),
        (lambda: F.adaptive_avg_pool1d(tp.ones(1, 2, 3), (2, 3)), RuntimeError,
         r"adaptive_avg_pool1d\(\) argument 'output_size' should contain one int \(got 2\)"),
        (lambda: F.adaptive_avg_pool2d(tp.ones(2, 2), (2, 2)), ValueError, "Input dimension should be at least 3"),
        (lambda: F.adaptive_max_pool2d(tp.ones(2, 2), (2, 2)), ValueError, "Input dimension should be at least 3"),
        (lambda: F.conv2d(x2, tp.ones(1, 1, 2, 2), dilation=0), RuntimeError,
         r"dilation should be greater than zero, but got \[0, 0\]"),
        (lambda: F.conv1d(x1, tp.ones(1, 2)), RuntimeError, "weight should have at least three dimensions"),
        (lambda: F.conv2d(x2, tp.ones(1, 1, 2), padding="same"), RuntimeError,
         r"Expected 3-dimensional input for 3-dimensional weight\[1, 1, 2\], but got 4-dimensional input of size "
         r"\[1, 1, 6, 6\] instead"),
    ]
    for call, error, match in cases:
        with pytest.raises(error, match=match):
            call()


@pytest.mark.parametrize("name", ["linspace", "logspace"])
def test_linspace_logspace_refuse_ends_with_dims(name):
    fn = getattr(tp, name)
    with pytest.raises(RuntimeError, match=f"{name} only supports 0-dimensional start and end tensors, but got "
                                           r"start with 1 dimension\(s\) and end with 0 dimension\(s\)\."):
        fn(tp.tensor([1.0]), tp.tensor(3.0), 3)  # even one element, as PyTorch
    assert fn(tp.tensor(1.0), tp.tensor(3.0), 3).shape == (3,)


@pytest.mark.parametrize("name", ["hsplit", "vsplit", "dsplit"])
def test_split_with_a_str_is_the_invalid_combination_type_error(name):
    with pytest.raises(TypeError, match=f"{name}\\(\\) received an invalid combination of arguments - got "
                                        "\\(Tensor, str\\)"):
        getattr(tp, name)(tp.ones(2, 2, 2), "abc")


def test_zero_gradient_results_are_differentiable_as_in_pytorch():
    A = tp.tensor([[2.0, 1.0], [1.0, 3.0]], dtype=tp.float64, requires_grad=True)
    sign, logabs = tp.linalg.slogdet(A)
    assert sign.requires_grad and sign.item() == 1.0
    g, = tp.autograd.grad(sign, (A,))
    assert g.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    P = tp.linalg.matrix_power(A, 0)
    assert P.requires_grad and P.tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert tp.autograd.grad(P.sum(), (A,))[0].tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert not tp.linalg.matrix_power(A.detach(), 0).requires_grad
    d = tp.nn.functional.pdist(tp.ones(1, 3, dtype=tp.float64, requires_grad=True))
    assert d.shape == (0,) and d.requires_grad


def test_unfold_and_fold_take_bool_as_pytorch_does():
    x = tp.tensor([[[[True, False, True], [False, True, False], [True, True, False]]]])
    cols = tp.nn.functional.unfold(x, 2)
    assert cols.dtype is tp.bool and cols.shape == (1, 4, 4)
    assert cols[0, :, 0].tolist() == [True, False, False, True]  # the top-left 2x2 block
    back = tp.nn.functional.fold(cols, (3, 3), 2)
    assert back.dtype is tp.bool and back.tolist() == x.tolist()  # overlaps OR together
    with pytest.raises(NotImplementedError, match="im2col_out_cpu"):
        tp.nn.functional.unfold(x.long(), 2)


def test_local_response_norm_of_integers_truncates_the_mean_as_pytorch():
    x = tp.tensor([[[1], [2], [3]]])  # (1, 3, 1) int64
    out = tp.nn.functional.local_response_norm(x, 2, alpha=1.0, beta=1.0, k=1.0)
    # the window means of the squares are trunc((0 + 1) / 2) = 0, trunc((1 + 4) / 2) = 2, trunc(13 / 2) = 6
    assert out.dtype is tp.float32
    assert out.flatten().tolist() == pytest.approx([1 / 1, 2 / 3, 3 / 7])


def test_margin_losses_check_their_inputs_in_pytorchs_order():
    F = tp.nn.functional
    with pytest.raises(RuntimeError, match=r"Expected non-empty vector or matrix .* but got: \[5, 0\]"):
        F.multi_margin_loss(tp.ones(5, 0), tp.zeros(5, dtype=tp.int64))
    with pytest.raises(RuntimeError, match=r"Expected non-empty vector or matrix .* but got: \[5, 0\]"):
        F.multilabel_margin_loss(tp.ones(5, 0), tp.zeros(5, 4, dtype=tp.int64))
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Float"):
        F.multi_margin_loss(tp.ones(5, 4), tp.zeros(5))
    with pytest.raises(RuntimeError, match=r"inconsistent weight size, expected 4 but got \[5\]"):
        F.multi_margin_loss(tp.ones(5, 4), tp.zeros(5, dtype=tp.int64), weight=tp.ones(5))
    # a 1-d input takes a 1-d target of its size; a 0-dim input a one-element target
    assert F.multilabel_margin_loss(tp.tensor([0.5, 1.0, 2.0]), tp.tensor([1, -1, 0])).item() == pytest.approx(
        (max(0, 1 - (1.0 - 2.0)) + max(0, 1 - (1.0 - 0.5))) / 3)
    assert F.multilabel_margin_loss(tp.tensor(0.5), tp.tensor([0])).item() == 0.0
    with pytest.raises(RuntimeError, match="The size of tensor a \\(4\\) must match the size of tensor b \\(5\\)"):
        F.soft_margin_loss(tp.ones(2, 4), tp.ones(2, 5))  # input is tensor a, as in PyTorch


def test_normal_is_differentiable_with_a_zero_gradient_as_in_pytorch():
    mean = tp.randn(4, requires_grad=True)
    std = tp.ones(4, requires_grad=True)
    out = tp.normal(mean, std)
    assert out.requires_grad
    gm, gs = tp.autograd.grad(out.sum(), (mean, std))
    assert gm.tolist() == [0.0] * 4 and gs.tolist() == [0.0] * 4
    out = tp.normal(2.0, std)
    assert tp.autograd.grad(out.sum(), std)[0].tolist() == [0.0] * 4
    with tp.no_grad():
        assert not tp.normal(mean, 1.0).requires_grad


def test_fill_with_a_number_is_differentiable_in_its_input():
    x = tp.randn(3, requires_grad=True)
    out = tp.fill(x, 2.5)
    assert out.requires_grad and out.tolist() == [2.5] * 3
    assert tp.autograd.grad(out.sum(), x)[0].tolist() == [0.0] * 3


@pytest.mark.parametrize("name", ["addmv", "baddbmm", "addbmm"])
def test_integer_products_cast_float_scalars_to_int_as_pytorch(name):
    i = tp.int64
    args = {"addmv": (tp.ones(5, dtype=i), tp.ones(5, 10, dtype=i), tp.ones(10, dtype=i)),
            "baddbmm": (tp.ones(2, 5, 10, dtype=i), tp.ones(2, 5, 5, dtype=i), tp.ones(2, 5, 10, dtype=i)),
            "addbmm": (tp.ones(5, 10, dtype=i), tp.ones(2, 5, 5, dtype=i), tp.ones(2, 5, 10, dtype=i))}[name]
    fn = getattr(tp, name)
    got = fn(*args, beta=2.7, alpha=1.6)
    assert got.dtype is i and got.tolist() == fn(*args, beta=2, alpha=1).tolist()
    with pytest.raises(RuntimeError, match="argument beta must not be a floating point number"):
        tp.addr(tp.ones(5, 10, dtype=i), tp.ones(5, dtype=i), tp.ones(10, dtype=i), beta=0.5)
