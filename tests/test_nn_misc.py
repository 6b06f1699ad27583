"""nn misc without PyTorch: the recurrent layers' fused LSTM op against its decomposition, parameter names
and init, argument errors, dropout variants' masks, in-place forms, init.sparse_/dirac_, ParameterList and
ParameterDict, and the transformer layers' structure and errors."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import nn
import tensorplug.nn.functional as F
from tensorplug.ops import nn_extra as E


def _rand(*shape, seed=0, dtype=tp.float64):
    return tp.tensor(np.random.default_rng(seed).uniform(-1, 1, shape), dtype=dtype)


# -- the LSTM recurrence ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [tp.float64, tp.float32])
def test_lstm_scan_kernel_matches_its_decomposition(dtype):
    args = [_rand(5, 3, 8, seed=1, dtype=dtype), _rand(3, 2, seed=2, dtype=dtype), _rand(3, 2, seed=3, dtype=dtype),
            _rand(8, 2, seed=4, dtype=dtype)]
    for a in args:
        a.requires_grad_()
    fused = E.lstm_scan(*args)
    pieces = E._lstm_scan(*args)  # the CompositeImplicitAutograd decomposition, run op by op
    tol = 1e-12 if dtype is tp.float64 else 1e-5
    for a, b in zip(fused, pieces):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=tol)
    g = [_rand(*t.shape, seed=10 + i, dtype=dtype) for i, t in enumerate(fused)]
    gf = tp.autograd.grad(sum((t * w).sum() for t, w in zip(fused, g)), args)
    gp = tp.autograd.grad(sum((t * w).sum() for t, w in zip(pieces, g)), args)
    for a, b in zip(gf, gp):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=tol * 10)


def test_lstm_scan_gradcheck():
    args = [_rand(3, 2, 8, seed=1), _rand(2, 2, seed=2), _rand(2, 2, seed=3), _rand(8, 2, seed=4)]
    for a in args:
        a.requires_grad_()
    assert tp.autograd.gradcheck(lambda *xs: tuple(E.lstm_scan(*xs)), tuple(args))


# -- the GRU recurrence -----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [tp.float64, tp.float32])
def test_gru_scan_kernel_matches_its_decomposition(dtype):
    args = [_rand(5, 3, 6, seed=1, dtype=dtype), _rand(3, 2, seed=2, dtype=dtype), _rand(6, 2, seed=3, dtype=dtype),
            _rand(6, seed=4, dtype=dtype)]
    for a in args:
        a.requires_grad_()
    fused = E.gru_scan(*args)
    pieces = E._gru_scan(*args)  # the CompositeImplicitAutograd decomposition, run op by op
    tol = 1e-12 if dtype is tp.float64 else 1e-5
    for a, b in zip(fused, pieces):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=tol)
    # gradients through both outputs (the kept gates too) and through the hidden states alone
    for outputs in (slice(None), slice(0, 1)):
        g = [_rand(*t.shape, seed=10 + i, dtype=dtype) for i, t in enumerate(fused)][outputs]
        gf = tp.autograd.grad(sum((t * w).sum() for t, w in zip(fused[outputs], g)), args, retain_graph=True)
        gp = tp.autograd.grad(sum((t * w).sum() for t, w in zip(pieces[outputs], g)), args, retain_graph=True)
        for a, b in zip(gf, gp):
            np.testing.assert_allclose(a.numpy(), b.numpy(), atol=tol * 10)


def test_gru_scan_gradcheck():
    args = [_rand(3, 2, 6, seed=1), _rand(2, 2, seed=2), _rand(6, 2, seed=3), _rand(6, seed=4)]
    for a in args:
        a.requires_grad_()
    assert tp.autograd.gradcheck(lambda *xs: tuple(E.gru_scan(*xs)), tuple(args))


def test_gru_scan_checks_sizes():
    with pytest.raises(RuntimeError, match="_gru_scan: inconsistent sizes"):
        E.gru_scan(tp.zeros(3, 2, 6), tp.zeros(2, 3), tp.zeros(6, 3), tp.zeros(6))


@pytest.mark.parametrize("cls, node", [(nn.LSTM, "LstmScan"), (nn.GRU, "GruScan")])
def test_recurrence_records_one_node_per_layer_and_direction(cls, node):
    m = cls(3, 4, num_layers=2, bidirectional=True)
    out, _ = m(_rand(5, 2, 3, dtype=tp.float32))
    seen, stack = set(), [out.grad_fn]
    names = []
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        names.append(n.name())
        stack.extend(f for f, _ in n.next_functions)
    assert sum(node in n for n in names) == 4


# -- recurrent layers: names, init, errors ------------------------------------------------------------------
def test_recurrent_parameter_names_and_shapes():
    m = nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2)
    shapes = {k: tuple(v.shape) for k, v in m.state_dict().items()}
    assert list(shapes)[:5] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_hr_l0"]
    assert shapes["weight_ih_l0"] == (20, 3) and shapes["weight_hh_l0"] == (20, 2)
    assert shapes["weight_ih_l1_reverse"] == (20, 4) and shapes["weight_hr_l1_reverse"] == (2, 5)
    g = nn.GRU(3, 5, bias=False)
    assert list(g.state_dict()) == ["weight_ih_l0", "weight_hh_l0"] and g.weight_ih_l0.shape == (15, 3)
    assert list(nn.GRUCell(3, 4).state_dict()) == ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]


@pytest.mark.parametrize("cls", [nn.RNN, nn.LSTM, nn.GRU, nn.RNNCell, nn.LSTMCell, nn.GRUCell])
def test_recurrent_init_is_uniform_in_one_over_sqrt_hidden(cls):
    tp.manual_seed(0)
    m = cls(10, 16)
    bound = 1 / math.sqrt(16)
    values = np.concatenate([p.detach().numpy().ravel() for p in m.parameters()])
    assert np.abs(values).max() <= bound
    assert np.abs(values).max() > 0.9 * bound and abs(values.mean()) < 0.02


def test_recurrent_shapes_unbatched_batch_first_and_states():
    m = nn.GRU(3, 4, num_layers=2, batch_first=True, bidirectional=True)
    out, h = m(_rand(2, 5, 3, dtype=tp.float32))
    assert out.shape == (2, 5, 8) and h.shape == (4, 2, 4)
    out, h = m(_rand(5, 3, dtype=tp.float32))
    assert out.shape == (5, 8) and h.shape == (4, 4)
    lstm = nn.LSTM(3, 4, proj_size=2)
    out, (h, c) = lstm(_rand(6, 2, 3, dtype=tp.float32))
    assert out.shape == (6, 2, 2) and h.shape == (1, 2, 2) and c.shape == (1, 2, 4)
    cell = nn.LSTMCell(3, 4)
    h, c = cell(_rand(3, dtype=tp.float32))
    assert h.shape == (4,) and c.shape == (4,)


def test_recurrent_errors():
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM, not RNN or GRU"):
        nn.GRU(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="Unknown nonlinearity 'gelu'"):
        nn.RNN(3, 4, nonlinearity="gelu")
    with pytest.raises(ValueError, match="dropout should be a number in range"):
        nn.LSTM(3, 4, dropout=2)
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.LSTM(3, 4, dropout=0.5)
    m = nn.LSTM(3, 4)
    with pytest.raises(ValueError, match="LSTM: Expected input to be 2D or 3D, got 4D tensor instead"):
        m(tp.zeros(1, 2, 3, 4))
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. Expected 3, got 5"):
        m(tp.zeros(2, 2, 5))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(1, 2, 4\), got \[1, 3, 4\]"):
        m(tp.zeros(2, 2, 3), (tp.zeros(1, 3, 4), tp.zeros(1, 2, 4)))
    with pytest.raises(RuntimeError, match="For batched 3-D input, hx should also be 3-D but got 2-D tensor"):
        nn.RNN(3, 4)(tp.zeros(2, 2, 3), tp.zeros(2, 4))
    with pytest.raises(ValueError, match="RNN input dtype"):
        nn.RNN(3, 4)(tp.zeros(2, 2, 3, dtype=tp.float64))
    with pytest.raises(ValueError, match="GRUCell: Expected input to be 1D or 2D, got 3D instead"):
        nn.GRUCell(3, 4)(tp.zeros(1, 2, 3))


def test_recurrent_dropout_only_in_training():
    m = nn.LSTM(3, 4, num_layers=2, dropout=0.5)
    x = _rand(4, 2, 3, dtype=tp.float32)
    m.eval()
    a, _ = m(x)
    b, _ = m(x)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    m.train()
    tp.manual_seed(1)
    c, _ = m(x)
    assert not np.allclose(a.detach().numpy(), c.detach().numpy())


# -- transformer layers ----------------------------------------------------------------------------------
def test_transformer_structure_and_state_dict_keys():
    t = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16)
    keys = list(t.state_dict())
    assert keys[:4] == ["encoder.layers.0.self_attn.in_proj_weight", "encoder.layers.0.self_attn.in_proj_bias",
                        "encoder.layers.0.self_attn.out_proj.weight", "encoder.layers.0.self_attn.out_proj.bias"]
    assert "decoder.layers.0.multihead_attn.in_proj_weight" in keys and "decoder.norm.bias" in keys
    assert "encoder.norm.weight" in keys and "decoder.layers.0.norm3.weight" in keys
    out = t(_rand(5, 2, 8, dtype=tp.float32), _rand(3, 2, 8, dtype=tp.float32))
    assert out.shape == (3, 2, 8)


def test_transformer_errors_and_mask():
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")
    t = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        t(tp.zeros(5, 2, 8), tp.zeros(3, 3, 8))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to d_model"):
        t(tp.zeros(5, 2, 6), tp.zeros(3, 2, 6))
    m = nn.Transformer.generate_square_subsequent_mask(3).numpy()
    assert np.isneginf(m[0, 1]) and np.isneginf(m[0, 2]) and np.isneginf(m[1, 2])
    assert (m[np.tril_indices(3)] == 0).all()


def test_encoder_layers_are_independent_copies():
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 2)
    a, b = enc.layers[0].linear1.weight, enc.layers[1].linear1.weight
    assert a is not b
    with tp.no_grad():
        a.add_(1)
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())


# -- dropout variants ----------------------------------------------------------------------------------------
def test_feature_dropout_zeroes_whole_channels():
    tp.manual_seed(0)
    x = tp.ones(8, 16, 5)
    y = F.dropout1d(x, 0.5).numpy()
    per_channel = y.reshape(8, 16, 5)
    assert ((per_channel == 0).all(-1) | (per_channel == 2).all(-1)).all()
    assert 0 < (per_channel[..., 0] == 0).mean() < 1
    y2 = F.dropout2d(tp.ones(4, 6, 3, 3), 0.5).numpy()
    assert ((y2 == 0).all((-1, -2)) | (y2 == 2).all((-1, -2))).all()
    assert F.dropout3d(tp.ones(3, 2, 2, 2), 0.5).shape == (3, 2, 2, 2)  # unbatched (C, D, H, W)


def test_dropout_variants_identity_and_errors():
    x = _rand(2, 3, 4)
    assert F.dropout1d(x, 0.5, training=False) is x
    assert F.alpha_dropout(x, 0.5) is x  # training=False by default, as in PyTorch
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a 4D input"):
        F.dropout1d(tp.zeros(1, 2, 3, 4))
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got -0.1"):
        nn.Dropout2d(-0.1)
    with pytest.warns(UserWarning, match="dropout2d: Received a 3D input"):
        F.dropout2d(tp.ones(2, 3, 4), 0.5)


def test_alpha_dropout_keeps_mean_and_variance():
    tp.manual_seed(0)
    x = tp.randn(200000)
    y = F.alpha_dropout(x, 0.3, training=True).numpy()
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02
    z = F.feature_alpha_dropout(tp.randn(2000, 100, 2), 0.3, training=True).numpy()
    assert abs(z.mean()) < 0.03 and abs(z.std() - 1) < 0.03


# -- in-place forms -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("fn,ref", [
    (lambda x: F.selu_(x), lambda x: F.selu(x)), (lambda x: F.celu(x, 0.5, inplace=True), lambda x: F.celu(x, 0.5)),
    (lambda x: F.hardswish(x, inplace=True), F.hardswish), (lambda x: F.hardsigmoid(x, True), F.hardsigmoid),
    (lambda x: F.threshold_(x, 0.1, 9.0), lambda x: F.threshold(x, 0.1, 9.0)),
    (lambda x: F.rrelu_(x), lambda x: F.rrelu(x)),
])
def test_inplace_forms_write_into_their_input(fn, ref):
    x = _rand(3, 4, seed=3)
    want = ref(x.clone()).numpy()
    assert fn(x) is x
    np.testing.assert_allclose(x.numpy(), want)


def test_inplace_activation_under_autograd():
    a = _rand(3, 4, seed=4).requires_grad_()
    x = a * 1.0
    F.selu_(x)
    x.sum().backward()
    b = _rand(3, 4, seed=4).requires_grad_()
    F.selu(b).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy())


def test_rrelu_training_draws_slopes_in_range():
    tp.manual_seed(0)
    x = -tp.ones(1000)
    y = F.rrelu(x, 0.1, 0.3, training=True).numpy()
    assert (y <= -0.1 + 1e-7).all() and (y >= -0.3 - 1e-7).all() and y.std() > 0.03


# -- init --------------------------------------------------------------------------------------------------
def test_init_sparse_and_dirac():
    tp.manual_seed(0)
    w = nn.init.sparse_(tp.empty(10, 4), 0.3, std=0.5)
    assert ((w.numpy() == 0).sum(0) == 3).all()
    d = nn.init.dirac_(tp.empty(2, 3, 3)).numpy()
    assert d[0, 0, 1] == 1 and d[1, 1, 1] == 1 and d.sum() == 2
    with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions are supported"):
        nn.init.dirac_(tp.empty(2, 2))
    with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
        nn.init.dirac_(tp.empty(3, 2, 3), groups=2)
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        nn.init.sparse_(tp.empty(2, 2, 2), 0.1)


# -- containers ----------------------------------------------------------------------------------------------
def test_parameter_list_and_dict():
    pl = nn.ParameterList([tp.ones(2), nn.Parameter(tp.zeros(3))])
    assert len(pl) == 2 and isinstance(pl[0], nn.Parameter) and pl[-1].shape == (3,)
    pl.append(tp.ones(4))
    assert [n for n, _ in pl.named_parameters()] == ["0", "1", "2"]
    assert len(pl[1:]) == 2
    with pytest.raises(IndexError):
        pl[5]
    pd = nn.ParameterDict({"a": tp.ones(2)})
    pd["b"] = tp.zeros(1)
    assert list(pd.keys()) == ["a", "b"] and isinstance(pd["b"], nn.Parameter) and "a" in pd
    assert pd.pop("a").shape == (2,) and list(pd) == ["b"]
    m = nn.Module()
    m.params = pd
    assert list(m.state_dict()) == ["params.b"]


# -- misc layers ---------------------------------------------------------------------------------------------
def test_small_modules_and_errors():
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D instead"):
        nn.Softmax2d()(tp.zeros(2, 3))
    with pytest.raises(ValueError, match="expected 3D or 4D input \\(got 2D input\\)"):
        nn.InstanceNorm2d(3)(tp.zeros(2, 3))
    bag = nn.EmbeddingBag(5, 2, mode="sum", padding_idx=0)
    assert (bag.weight[0].detach().numpy() == 0).all()
    assert bag(tp.tensor([1, 2, 0]), tp.tensor([0, 1])).shape == (2, 2)
    with pytest.raises(ValueError, match="max mode does not support scaling the gradient by the frequency"):
        F.embedding_bag(tp.tensor([[0]]), tp.ones(2, 2), mode="max", scale_grad_by_freq=True)
    with pytest.raises(RuntimeError, match="offsets\\[0\\] has to be 0"):
        F.embedding_bag(tp.tensor([0, 1]), tp.ones(2, 2), tp.tensor([1]))
    with pytest.raises(ValueError, match="TripletMarginLoss: expected margin to be greater than 0"):
        nn.TripletMarginLoss(margin=0)
    loss = nn.MultiMarginLoss(p=2, margin=0.5)(_rand(3, 4), tp.tensor([0, 1, 2]))
    assert loss.shape == ()


def test_new_losses_warn_on_legacy_arguments():
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        F.soft_margin_loss(_rand(3), tp.ones(3, dtype=tp.float64), size_average=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.soft_margin_loss(_rand(3), tp.ones(3, dtype=tp.float64), reduction="sum")


def test_ctc_loss_single_path_and_unbatched():
    # one frame per label and no blank can be skipped: the only alignment's probability
    lp = tp.tensor([[0.5, 0.25, 0.25], [0.1, 0.2, 0.7]], dtype=tp.float64).log()
    loss = F.ctc_loss(lp, tp.tensor([1, 2]), 2, 2, reduction="sum")
    assert abs(loss.item() + math.log(0.25 * 0.7)) < 1e-12
    assert F.ctc_loss(lp, tp.tensor([1, 2]), 2, 2, reduction="none").shape == ()
    with pytest.raises(RuntimeError, match="blank must be in label range"):
        F.ctc_loss(lp, tp.tensor([1]), 2, 1, blank=3)
    impossible = F.ctc_loss(lp, tp.tensor([1, 1]), 2, 2, reduction="sum")
    assert math.isinf(impossible.item())
    assert nn.CTCLoss(zero_infinity=True)(lp, tp.tensor([1, 1]), 2, 2).item() == 0.0


def test_ctc_loss_under_vmap_folds_the_examples_into_the_batch():
    logits = _rand(4, 6, 2, 5, seed=7)
    targets = tp.tensor([[1, 2], [3, 3]])

    def f(x):
        return F.ctc_loss(x.log_softmax(-1), targets, [6, 5], [2, 2], reduction="none")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a rule, not the slow loop
        out = tp.vmap(f)(logits)
        grads = tp.vmap(tp.func.grad(lambda x: f(x).sum()))(logits)
    np.testing.assert_allclose(out.numpy(), tp.stack([f(logits[i]) for i in range(4)]).numpy(), atol=1e-12)
    loop = tp.stack([tp.func.grad(lambda x: f(x).sum())(logits[i]) for i in range(4)])
    np.testing.assert_allclose(grads.numpy(), loop.numpy(), atol=1e-12)


def test_triplet_margin_must_be_positive_and_rms_norm_needs_a_shape():
    import pytest
    import tensorplug as tp
    from tensorplug.nn import functional as F
    x = tp.randn(3, 4)
    for margin in (-1.0, 0.0):
        with pytest.raises(ValueError, match=f"margin must be greater than 0, got {margin}"):
            F.triplet_margin_loss(x, x, x, margin=margin)
    with pytest.raises(RuntimeError, match="Expected normalized_shape to be at least 1-dimensional"):
        F.rms_norm(x, [])
    assert F.triplet_margin_loss(x, x, x, margin=0.5).item() == pytest.approx(0.5, abs=1e-5)
