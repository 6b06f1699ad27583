"""nn misc (activations, norms, distances, losses, recurrent and transformer layers) against PyTorch.

Functions: the same float64 inputs go through ``tensorplug.nn.functional`` and ``torch.nn.functional``;
values and input gradients must agree. Layers: a PyTorch module's state_dict is loaded into ours, and
outputs and gradients (inputs and parameters) must agree.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import nn
import tensorplug.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _arr(shape, seed, low=-2.0, high=2.0):
    return np.random.default_rng(seed).uniform(low, high, shape)


class C(np.ndarray):
    """An input that takes no gradient (targets, running statistics)."""


def _c(a):
    return np.asarray(a).view(C)


def _pair(a, grad=True):
    grad = grad and not isinstance(a, C)
    a = np.asarray(a).view(np.ndarray)
    t = tp.tensor(a)
    u = torch.from_numpy(np.array(a))
    if grad and a.dtype.kind == "f":
        t.requires_grad_()
        u.requires_grad_()
    return t, u


def _close(ours, theirs, what, rtol=1e-6, atol=1e-7):
    a = ours.detach().numpy() if isinstance(ours, tp.Tensor) else np.asarray(ours)
    b = theirs.detach().numpy() if isinstance(theirs, torch.Tensor) else np.asarray(theirs)
    assert a.shape == b.shape, (what, a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=what)


X = _arr((3, 4), 0)
Y = _arr((3, 4), 1)
Z = _arr((3, 4), 2)
SIGN = _c([1.0, -1.0, 1.0])
PM = _c(np.where(_arr((3, 4), 3) > 0, 1.0, -1.0))
IMG = _arr((2, 3, 4, 5), 4)
SEQ = _arr((2, 6, 5), 5)

# name, (arrays...), kwargs; each array a float64 input (gradients compared) or an int64 one
CASES = [
    ("hardswish", (X * 2,), {}), ("hardsigmoid", (X * 2,), {}), ("selu", (X,), {}), ("celu", (X,), {"alpha": 0.7}),
    ("glu", (X,), {"dim": 1}), ("glu", (IMG[:, :2],), {"dim": 1}), ("softsign", (X,), {}),
    ("threshold", (X,), {"threshold": 0.3, "value": -2.0}), ("hardshrink", (X,), {"lambd": 0.4}),
    ("softshrink", (X,), {"lambd": 0.4}), ("tanhshrink", (X,), {}), ("logsigmoid", (X,), {}), ("relu6", (X * 4,), {}),
    ("rrelu", (X,), {}), ("rrelu", (X,), {"lower": 0.2, "upper": 0.4}),
    ("prelu", (IMG, np.array([0.1, 0.2, 0.3])), {}), ("prelu", (X, np.array([0.25])), {}),
    ("rms_norm", (X,), {"normalized_shape": (4,)}), ("rms_norm", (IMG, (4, 5), _arr((4, 5), 9)), {}),
    ("instance_norm", (IMG,), {}), ("instance_norm", (SEQ, _c(_arr((6,), 6)), _c(np.abs(_arr((6,), 7)))), {}),
    ("local_response_norm", (IMG,), {"size": 2}), ("local_response_norm", (SEQ,), {"size": 3, "k": 2.0}),
    ("cosine_similarity", (X, Y), {}), ("cosine_similarity", (IMG, IMG[:1] * 0.5 + 0.1), {"dim": 2}),
    ("pairwise_distance", (X, Y), {}), ("pairwise_distance", (X, Y), {"p": 1.5, "keepdim": True}),
    ("pdist", (X,), {}), ("pdist", (X,), {"p": 3.0}),
    ("margin_ranking_loss", (X[:, 0], X[:, 1], SIGN), {"margin": 0.1}),
    ("triplet_margin_loss", (X, Y, Z), {}), ("triplet_margin_loss", (X, Y, Z), {"swap": True, "p": 1, "reduction": "none"}),
    ("triplet_margin_with_distance_loss", (X, Y, Z), {"margin": 2.0}),
    ("cosine_embedding_loss", (X, Y, SIGN), {"margin": -0.2}), ("cosine_embedding_loss", (X, Y, SIGN), {"reduction": "sum"}),
    ("gaussian_nll_loss", (X, Y, np.abs(Z) + 0.1), {}), ("gaussian_nll_loss", (X, Y, np.abs(Z[:, 0]) + 0.1), {"full": True}),
    ("poisson_nll_loss", (X, np.abs(Y) * 2), {}), ("poisson_nll_loss", (np.abs(X) + 0.1, np.abs(Y) * 2),
                                                   {"log_input": False, "full": True, "reduction": "sum"}),
    ("multilabel_soft_margin_loss", (X, _c(PM > 0).astype(np.float64)), {}),
    ("multilabel_soft_margin_loss", (X, _c(PM > 0).astype(np.float64), np.array([1.0, 2.0, 0.5, 1.0])), {"reduction": "none"}),
    ("multilabel_margin_loss", (X, np.array([[0, 2, -1, 1], [3, -1, 0, 0], [1, 2, 3, 0]])), {}),
    ("multi_margin_loss", (X, np.array([0, 3, 1])), {}),
    ("multi_margin_loss", (X, np.array([0, 3, 1]), 2, 0.7, _c([1.0, 2.0, 0.5, 1.5])), {"reduction": "sum"}),
    ("soft_margin_loss", (X, PM), {}), ("hinge_embedding_loss", (X, PM), {"margin": 0.5}),
    ("hinge_embedding_loss", (X, PM), {"reduction": "none"}),
    ("kl_div", (np.log(np.abs(X) + 0.1), np.abs(Y)), {"reduction": "batchmean"}),
]


@pytest.mark.parametrize("name,arrays,kwargs", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_functional_matches_torch(name, arrays, kwargs):
    ours, theirs = zip(*(_pair(a) if isinstance(a, np.ndarray) else (a, a) for a in arrays))
    out = getattr(F, name)(*ours, **kwargs)
    ref = getattr(TF, name)(*theirs, **kwargs)
    _close(out, ref, name)
    seed = np.random.default_rng(11).standard_normal(tuple(ref.shape))
    out.backward(tp.tensor(seed))
    ref.backward(torch.from_numpy(seed))
    for i, (t, u) in enumerate(zip(ours, theirs)):
        if isinstance(t, tp.Tensor) and t.requires_grad:
            _close(t.grad, u.grad, f"{name} grad of input {i}")


# -- recurrent layers: a torch state_dict loads, outputs and gradients agree ---------------------------------
def _load_from_torch(ours, theirs):
    state = {k: tp.tensor(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()}
    assert list(state) == list(ours.state_dict()), "state_dict keys differ"
    ours.load_state_dict(state)


def _flatten(out):
    if isinstance(out, (tuple, list)):
        for o in out:
            yield from _flatten(o)
    elif out is not None:
        yield out


def _compare_modules(ours, theirs, arrays, what, atol=1e-9, call=None):
    ours.double()
    theirs.double()
    _load_from_torch(ours, theirs)
    ti = [tp.tensor(a).requires_grad_() for a in arrays]
    ui = [torch.from_numpy(np.array(a)).requires_grad_() for a in arrays]
    call = call or (lambda m, xs: m(*xs))
    o_out, t_out = list(_flatten(call(ours, ti))), list(_flatten(call(theirs, ui)))
    assert len(o_out) == len(t_out)
    rng = np.random.default_rng(5)
    o_loss, t_loss = 0, 0
    for k, (o, t) in enumerate(zip(o_out, t_out)):
        _close(o, t, f"{what} output {k}", rtol=1e-7, atol=atol)
        g = rng.standard_normal(tuple(t.shape))
        o_loss = o_loss + (o * tp.tensor(g)).sum()
        t_loss = t_loss + (t * torch.from_numpy(g)).sum()
    o_loss.backward()
    t_loss.backward()
    for k, (a, b) in enumerate(zip(ti, ui)):
        _close(a.grad, b.grad, f"{what} input grad {k}", rtol=1e-7, atol=atol)
    theirs_params = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        _close(p.grad, theirs_params[name].grad, f"{what} grad of {name}", rtol=1e-7, atol=atol)


RNN_CASES = [
    ("RNN", (5, 7), {}, (4, 3, 5)),
    ("RNN", (5, 7), {"nonlinearity": "relu", "num_layers": 2, "bidirectional": True}, (4, 3, 5)),
    ("RNN", (5, 7), {"batch_first": True, "bias": False}, (3, 4, 5)),
    ("LSTM", (5, 7), {}, (6, 3, 5)),
    ("LSTM", (5, 7), {"num_layers": 2, "bidirectional": True}, (4, 2, 5)),
    ("LSTM", (5, 7), {"batch_first": True, "bias": False, "num_layers": 2}, (2, 4, 5)),
    ("LSTM", (5, 7), {"proj_size": 3, "bidirectional": True, "num_layers": 2}, (4, 2, 5)),
    ("LSTM", (5, 7), {}, (4, 5)),
    ("GRU", (5, 7), {}, (4, 3, 5)),
    ("GRU", (5, 7), {"num_layers": 2, "bidirectional": True, "batch_first": True}, (3, 4, 5)),
    ("GRU", (5, 7), {"bias": False}, (4, 5)),
]


@pytest.mark.parametrize("cls,args,kwargs,shape", RNN_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(RNN_CASES)])
def test_recurrent_layer_matches_torch(cls, args, kwargs, shape):
    ours, theirs = getattr(nn, cls)(*args, **kwargs), getattr(torch.nn, cls)(*args, **kwargs)
    _compare_modules(ours, theirs, [_arr(shape, 1)], cls)


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_recurrent_layer_with_initial_state_matches_torch(cls):
    kw = {"num_layers": 2, "bidirectional": True}
    ours, theirs = getattr(nn, cls)(3, 4, **kw), getattr(torch.nn, cls)(3, 4, **kw)
    x, h, c = _arr((5, 2, 3), 1), _arr((4, 2, 4), 2), _arr((4, 2, 4), 3)
    if cls == "LSTM":
        _compare_modules(ours, theirs, [x, h, c], cls, call=lambda m, xs: m(xs[0], (xs[1], xs[2])))
    else:
        _compare_modules(ours, theirs, [x, h], cls)


@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
@pytest.mark.parametrize("batched", [True, False])
def test_cell_matches_torch(cls, batched):
    ours, theirs = getattr(nn, cls)(3, 4), getattr(torch.nn, cls)(3, 4)
    shape = (2, 3) if batched else (3,)
    hshape = (2, 4) if batched else (4,)
    if cls == "LSTMCell":
        _compare_modules(ours, theirs, [_arr(shape, 1), _arr(hshape, 2), _arr(hshape, 3)], cls,
                         call=lambda m, xs: m(xs[0], (xs[1], xs[2])))
    else:
        _compare_modules(ours, theirs, [_arr(shape, 1), _arr(hshape, 2)], cls)


# -- transformer layers -------------------------------------------------------------------------------------
def _masks(lib, L, S, N):
    causal = lib.triu(lib.full((L, L), float("-inf"), dtype=lib.float64), diagonal=1)
    pad = np.zeros((N, S), dtype=bool)
    pad[0, -1] = True
    return causal, lib.tensor(pad) if lib is tp else torch.from_numpy(pad)


TRANSFORMER_CASES = [
    ({}, False), ({"norm_first": True, "activation": "gelu"}, False), ({"batch_first": True}, True),
    ({"activation": F.silu}, False),
]


@pytest.mark.parametrize("kwargs,bf", TRANSFORMER_CASES)
def test_encoder_layer_matches_torch(kwargs, bf):
    tkw = dict(kwargs)
    if callable(tkw.get("activation")) and not isinstance(tkw["activation"], str):
        tkw["activation"] = TF.silu
    ours = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, **kwargs), 2, nn.LayerNorm(8))
    theirs = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, **tkw), 2,
                                         torch.nn.LayerNorm(8), enable_nested_tensor=False)
    x = _arr((3, 4, 8) if bf else (4, 3, 8), 1)

    def call(m, xs):
        lib = tp if isinstance(xs[0], tp.Tensor) else torch
        mask, pad = _masks(lib, 4, 4, 3)
        return m(xs[0], mask=mask, src_key_padding_mask=pad)
    _compare_modules(ours, theirs, [x], "encoder", call=call, atol=1e-8)


@pytest.mark.parametrize("kwargs,bf", TRANSFORMER_CASES[:3])
def test_transformer_matches_torch(kwargs, bf):
    kw = dict(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=16, dropout=0.0)
    ours, theirs = nn.Transformer(**kw, **kwargs), torch.nn.Transformer(**kw, **kwargs)
    src = _arr((3, 5, 8) if bf else (5, 3, 8), 1)
    tgt = _arr((3, 4, 8) if bf else (4, 3, 8), 2)

    def call(m, xs):
        lib = tp if isinstance(xs[0], tp.Tensor) else torch
        mask = m.generate_square_subsequent_mask(4, dtype=lib.float64)
        _, pad = _masks(lib, 4, 5, 3)
        return m(xs[0], xs[1], tgt_mask=mask, src_key_padding_mask=pad, memory_key_padding_mask=pad)
    _compare_modules(ours, theirs, [src, tgt], "transformer", call=call, atol=1e-8)


def test_generate_square_subsequent_mask_matches_torch():
    _close(nn.Transformer.generate_square_subsequent_mask(4), torch.nn.Transformer.generate_square_subsequent_mask(4),
           "mask")


MHA_CASES = [
    {}, {"need_weights": False}, {"bias_kv": True, "add_zero_attn": True}, {"separate": True, "average": False},
    {"kpm": True, "mask": True}, {"kpm": True, "mask": True, "need_weights": False}, {"unbatched": True},
]


@pytest.mark.parametrize("case", MHA_CASES)
def test_multi_head_attention_forward_matches_torch(case):
    E, H, L, S, N = 8, 2, 3, 4, 2
    arrays = {"q": _arr((L, N, E), 1), "k": _arr((S, N, E), 2), "v": _arr((S, N, E), 3),
              "w": _arr((3 * E, E), 4, -0.5, 0.5), "b": _arr((3 * E,), 5), "ow": _arr((E, E), 6, -0.5, 0.5),
              "ob": _arr((E,), 7), "bk": _arr((1, 1, E), 8), "bv": _arr((1, 1, E), 9)}
    if case.get("unbatched"):
        for n in "qkv":
            arrays[n] = arrays[n][:, 0]
    pad = np.zeros((N, S), bool)
    pad[1, 0] = True
    mask = np.zeros((L, S), bool)
    mask[0, 1] = True

    def run(lib, F_):
        ts = {n: (tp.tensor(a) if lib is tp else torch.from_numpy(a.copy())).requires_grad_() for n, a in arrays.items()}
        mk = (lambda a: tp.tensor(a)) if lib is tp else (lambda a: torch.from_numpy(a.copy()))
        sep = case.get("separate", False)
        out = F_.multi_head_attention_forward(
            ts["q"], ts["k"], ts["v"], E, H, None if sep else ts["w"], ts["b"],
            ts["bk"] if case.get("bias_kv") else None, ts["bv"] if case.get("bias_kv") else None,
            case.get("add_zero_attn", False), 0.0, ts["ow"], ts["ob"],
            key_padding_mask=mk(pad) if case.get("kpm") else None, need_weights=case.get("need_weights", True),
            attn_mask=mk(mask) if case.get("mask") else None, use_separate_proj_weight=sep,
            q_proj_weight=ts["w"][:E] if sep else None, k_proj_weight=ts["w"][E:2 * E] if sep else None,
            v_proj_weight=ts["w"][2 * E:] if sep else None, average_attn_weights=case.get("average", True))
        total = out[0].sum() + (0 if out[1] is None else (out[1] * out[1]).sum())
        total.backward()
        return out, ts
    (o_out, o_w), o_ts = run(tp, F)
    (t_out, t_w), t_ts = run(torch, TF)
    _close(o_out, t_out, "output", atol=1e-9)
    assert (o_w is None) == (t_w is None)
    if o_w is not None:
        _close(o_w, t_w, "weights", atol=1e-9)
    for n in arrays:
        if t_ts[n].grad is not None:
            _close(o_ts[n].grad, t_ts[n].grad, f"grad {n}", atol=1e-9)


# -- more modules, embedding_bag and cdist -------------------------------------------------------------------
MODULE_CASES = [
    ("PReLU", (3,), {}, (2, 3, 4)), ("PReLU", (), {"init": 0.1}, (3, 4)),
    ("InstanceNorm1d", (3,), {"affine": True}, (2, 3, 5)),
    ("InstanceNorm2d", (3,), {"affine": True, "track_running_stats": True}, (2, 3, 4, 4)),
    ("InstanceNorm1d", (3,), {}, (3, 5)),
    ("RMSNorm", (4,), {}, (3, 4)), ("RMSNorm", ((3, 4),), {"eps": 1e-3}, (2, 3, 4)),
    ("LocalResponseNorm", (3,), {"k": 2.0}, (2, 5, 3)),
    ("Bilinear", (3, 4, 2), {}, None), ("GLU", (), {}, (3, 4)), ("Softmax2d", (), {}, (2, 3, 4, 4)),
    ("CosineSimilarity", (), {}, None), ("PairwiseDistance", (), {"p": 1.0}, None),
]


@pytest.mark.parametrize("cls,args,kwargs,shape", MODULE_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(MODULE_CASES)])
def test_module_matches_torch(cls, args, kwargs, shape):
    ours, theirs = getattr(nn, cls)(*args, **kwargs), getattr(torch.nn, cls)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    if cls == "Bilinear":
        arrays = [_arr((5, 3), 1), _arr((5, 4), 2)]
    elif cls in ("CosineSimilarity", "PairwiseDistance"):
        arrays = [_arr((3, 4), 1), _arr((3, 4), 2)]
    else:
        arrays = [_arr(shape, 1)]
    _compare_modules(ours, theirs, arrays, cls)
    for name, buf in theirs.named_buffers():
        _close(dict(ours.named_buffers())[name], buf, f"{cls} buffer {name}")


def test_instance_norm_eval_uses_running_stats_like_torch():
    ours, theirs = nn.InstanceNorm1d(3, track_running_stats=True), torch.nn.InstanceNorm1d(3, track_running_stats=True)
    x = _arr((2, 3, 6), 1)
    for _ in range(2):
        ours(tp.tensor(x))
        theirs(torch.from_numpy(x))
    ours.eval()
    theirs.eval()
    _close(ours(tp.tensor(x * 2)), theirs(torch.from_numpy(x * 2)), "eval output")


BAG_CASES = [
    ({"mode": "sum"}, [[0, 2, 1], [3, 3, 5]], None),
    ({"mode": "mean"}, [0, 2, 1, 4, 5], [0, 2, 2]),
    ({"mode": "max"}, [1, 2, 4, 5], [0, 1]),
    ({"mode": "sum", "include_last_offset": True}, [1, 2, 4, 5], [0, 3, 4]),
    ({"mode": "mean", "padding_idx": 2}, [[0, 2], [2, 2]], None),
]


@pytest.mark.parametrize("kwargs,idx,offsets", BAG_CASES)
def test_embedding_bag_matches_torch(kwargs, idx, offsets):
    w = _arr((6, 3), 0)
    ow, tw = tp.tensor(w).requires_grad_(), torch.from_numpy(w.copy()).requires_grad_()
    oi, ti = tp.tensor(idx), torch.tensor(idx)
    oo = None if offsets is None else tp.tensor(offsets)
    to = None if offsets is None else torch.tensor(offsets)
    out, ref = F.embedding_bag(oi, ow, oo, **kwargs), TF.embedding_bag(ti, tw, to, **kwargs)
    _close(out, ref, "embedding_bag")
    g = np.random.default_rng(1).standard_normal(tuple(ref.shape))
    out.backward(tp.tensor(g))
    ref.backward(torch.from_numpy(g))
    _close(ow.grad, tw.grad, "embedding_bag weight grad")


def test_embedding_bag_per_sample_weights_match_torch():
    w, psw = _arr((6, 3), 0), _arr((4,), 1)
    out = F.embedding_bag(tp.tensor([1, 2, 4, 5]), tp.tensor(w), tp.tensor([0, 2]), mode="sum",
                          per_sample_weights=tp.tensor(psw))
    ref = TF.embedding_bag(torch.tensor([1, 2, 4, 5]), torch.from_numpy(w), torch.tensor([0, 2]), mode="sum",
                           per_sample_weights=torch.from_numpy(psw))
    _close(out, ref, "per_sample_weights")


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, math.inf])
def test_cdist_matches_torch(p):
    a, b = _arr((2, 3, 4), 1), _arr((2, 5, 4), 2)
    b[0, 0] = a[0, 0]  # a zero distance: its gradient is 0 in both
    (x, tx), (y, ty) = _pair(a), _pair(b)
    out, ref = tp.cdist(x, y, p), torch.cdist(tx, ty, p)
    _close(out, ref, "cdist")
    out.sum().backward()
    ref.sum().backward()
    _close(x.grad, tx.grad, "cdist grad x1")
    _close(y.grad, ty.grad, "cdist grad x2")


def test_lstm_state_dict_from_torch_then_training_step_matches():
    theirs = torch.nn.LSTM(4, 6, num_layers=2, batch_first=True).double()
    ours = nn.LSTM(4, 6, num_layers=2, batch_first=True).double()
    _load_from_torch(ours, theirs)
    x = _arr((3, 5, 4), 1)
    opt_o, opt_t = tp.optim.SGD(ours.parameters(), lr=0.1), torch.optim.SGD(theirs.parameters(), lr=0.1)
    for _ in range(2):
        for m, opt, xx in ((ours, opt_o, tp.tensor(x)), (theirs, opt_t, torch.from_numpy(x))):
            opt.zero_grad()
            out, (h, c) = m(xx)
            (out.sum() + (h * c).sum()).backward()
            opt.step()
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        _close(p, q, f"after two steps: {name}")


CTC_CASES = [("mean", False, False), ("sum", True, False), ("none", False, True), ("mean", True, True)]


@pytest.mark.parametrize("reduction,concatenated,zero_infinity", CTC_CASES)
def test_ctc_loss_matches_torch(reduction, concatenated, zero_infinity):
    logits = _arr((6, 3, 5), 0)
    tg = np.array([[1, 2, 2], [3, 1, 0], [4, 4, 4]])
    il, tl = [6, 5, 2], [3, 2, 3]  # the last sample cannot be aligned: its loss is inf
    t = np.concatenate([tg[b, :tl[b]] for b in range(3)]) if concatenated else tg
    (x, tx) = _pair(logits)
    out = F.ctc_loss(x.log_softmax(-1), tp.tensor(t), tp.tensor(il), tp.tensor(tl), reduction=reduction,
                     zero_infinity=zero_infinity)
    ref = TF.ctc_loss(tx.log_softmax(-1), torch.tensor(t), torch.tensor(il), torch.tensor(tl), reduction=reduction,
                      zero_infinity=zero_infinity)
    _close(out, ref, "ctc_loss")
    if zero_infinity:
        g = np.random.default_rng(1).standard_normal(tuple(ref.shape))
        out.backward(tp.tensor(g))
        ref.backward(torch.from_numpy(g))
        _close(x.grad, tx.grad, "ctc_loss grad")


def test_ctc_loss_gradient_wrt_log_probs_is_torchs():
    lp = torch.from_numpy(_arr((5, 2, 4), 2)).log_softmax(-1).detach().requires_grad_()
    olp = tp.tensor(lp.detach().numpy()).requires_grad_()
    F.ctc_loss(olp, tp.tensor([[1, 2], [3, 3]]), [5, 4], [2, 2]).backward()
    TF.ctc_loss(lp, torch.tensor([[1, 2], [3, 3]]), [5, 4], [2, 2]).backward()
    _close(olp.grad, lp.grad, "grad")
    assert repr(nn.CTCLoss(blank=1)) == repr(torch.nn.CTCLoss(blank=1))
