"""More activations as operators: ``hardswish``, ``hardsigmoid``, ``selu``, ``celu``, ``softshrink``,
``hardshrink``, ``threshold``, ``glu``, ``prelu`` and ``rrelu``, with PyTorch's schemas.

Each is a CompositeImplicitAutograd kernel: autograd, vmap and every backend get it through its
pieces (``where``, ``clamp``, ``elu``, ``sigmoid``), and a backend may register a fused kernel of its
own. Checks run once, before dispatch, with PyTorch's CPU errors. float16 and bfloat16 inputs compute
in float32 and round once, as PyTorch's kernels do.
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..autograd.formulas import derivative
from ..tensor import _wrap_dim
from ._common import document as _document, opmath as _opmath, as_dtype as _as
from ._lib import POINTWISE, SEEDED, defop, public
from .activations import elu, leaky_relu
from .comparison import clamp, where_fn as _where
from .factories import empty_like, zeros
from .joining import cat, stack
from .linalg import norm
from .promotion import _pt_name
from .pointwise import not_implemented, zero_of as _zero_of

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _floating(kernel):
    def check(self, *rest):
        if not self._dtype.is_floating_point:
            raise not_implemented(kernel, self._dtype)
    return check


def _hardswish(self):
    x = _opmath(self)
    return _as(x * clamp(x + 3.0, 0.0, 6.0) / 6.0, self._dtype)


def _hardsigmoid(self):
    x = _opmath(self)
    return _as(clamp(x + 3.0, 0.0, 6.0) / 6.0, self._dtype)


def _inplace_of(fn):
    return lambda self, *args: self.copy_(fn(self, *args))


# PyTorch tags neither hardswish nor hardswish_ pointwise (vmap batches them through the decomposition)
hardswish = _document(defop("hardswish(Tensor self) -> Tensor", check=_floating("hardswish_cpu"),
                            composite=_hardswish),
                      "x * relu6(x + 3) / 6.")
hardswish_ = _document(defop("hardswish_(Tensor(a!) self) -> Tensor(a!)", check=_floating("hardswish_cpu"),
                             composite=_inplace_of(_hardswish)), "In-place hardswish.")
hardsigmoid = _document(defop("hardsigmoid(Tensor self) -> Tensor", check=_floating("hardsigmoid_cpu"),
                              composite=_hardsigmoid, tags=POINTWISE),
                        "relu6(x + 3) / 6.")
hardsigmoid_ = _document(defop("hardsigmoid_(Tensor(a!) self) -> Tensor(a!)", check=_floating("hardsigmoid_cpu"),
                               composite=_inplace_of(_hardsigmoid), tags=POINTWISE), "In-place hardsigmoid.")


def _selu(self):
    return elu(self, _SELU_ALPHA, _SELU_SCALE, 1)


selu = _document(defop("selu(Tensor self) -> Tensor", check=_floating("elu_cpu"), composite=_selu, tags=POINTWISE),
                 "scale * (max(0, x) + min(0, alpha * (exp(x) - 1))) with PyTorch's alpha and scale.")
selu_ = _document(defop("selu_(Tensor(a!) self) -> Tensor(a!)", check=_floating("elu_cpu"),
                        composite=_inplace_of(_selu), tags=POINTWISE), "In-place selu.")


def _check_celu(self, alpha=1.0):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    _floating("elu_cpu")(self)


def _celu(self, alpha=1.0):
    return elu(self, alpha, 1, 1.0 / alpha)


celu = _document(defop("celu(Tensor self, Scalar alpha=1.0) -> Tensor", check=_check_celu, composite=_celu,
                       tags=POINTWISE),
                 "max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).")
celu_ = _document(defop("celu_(Tensor(a!) self, Scalar alpha=1.0) -> Tensor(a!)", check=_check_celu,
                        composite=_inplace_of(_celu), tags=POINTWISE), "In-place celu.")


def _check_shrink(kernel):
    def check(self, lambd=0.5):
        if kernel == "softshrink" and lambd < 0:
            big = "3.40282e+38" if self._dtype is not _dt.float64 else "1.79769e+308"
            raise RuntimeError(f"lambda must be in range [0, {big}] for input dtype {_pt_name(self._dtype)}, but "
                               f"found {lambd:g}")
        if not self._dtype.is_floating_point:
            raise not_implemented(f"{kernel}_cpu", self._dtype)
    return check


def _softshrink(self, lambd=0.5):
    return _where(self > lambd, self - lambd, _where(self < -lambd, self + lambd, _zero_of(self)))


def _hardshrink(self, lambd=0.5):
    return _where((self >= -lambd) & (self <= lambd), _zero_of(self), self)


softshrink = _document(defop("softshrink(Tensor self, Scalar lambd=0.5) -> Tensor", check=_check_shrink("softshrink"),
                             composite=_softshrink, tags=POINTWISE),
                       "x - lambd where x > lambd, x + lambd where x < -lambd, else 0.")
hardshrink = _document(defop("hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor", check=_check_shrink("hardshrink"),
                             composite=_hardshrink, tags=POINTWISE),
                       "x where |x| > lambd, else 0.")


def _check_threshold(self, threshold, value):
    if self._dtype is _dt.bool:
        raise not_implemented("threshold_cpu", self._dtype)


def _threshold(self, threshold, value):
    if not self._dtype.is_floating_point:
        value = int(value)
    return _where(self <= threshold, value, self)


threshold = _document(defop("threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor", check=_check_threshold,
                            composite=_threshold, tags=POINTWISE),
                      "x where x > threshold, else value.")
# untagged, as in PyTorch
threshold_ = _document(defop("threshold_(Tensor(a!) self, Scalar threshold, Scalar value) -> Tensor(a!)",
                             check=_check_threshold, composite=_inplace_of(_threshold)),
                       "In-place threshold.")


def _check_glu(self, dim=-1):
    if not self._shape:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = _wrap_dim(dim, len(self._shape))
    if self._shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {self._shape[d]}")
    _floating("glu_cpu")(self)


def _glu(self, dim=-1):
    d = _wrap_dim(dim, len(self._shape))
    h = self._shape[d] // 2
    x = _opmath(self)
    return _as(x.narrow(d, 0, h) * x.narrow(d, h, h).sigmoid(), self._dtype)


glu = _document(defop("glu(Tensor self, int dim=-1) -> Tensor", check=_check_glu, composite=_glu),
                "a * sigmoid(b), a and b the two halves of ``dim``.")


def _check_prelu(self, weight):
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    n = weight.numel()
    channels = self._shape[1] if self.dim() >= 2 else 1
    if n != 1:
        if self.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        if n != channels:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{n} and channel size = {channels}.")
    _floating("prelu_cpu")(self)


def _prelu(self, weight):
    w = weight
    if weight.numel() != 1 and self.dim() >= 2:
        w = weight.reshape((-1,) + (1,) * (self.dim() - 2))
    elif weight.dim() == 1:
        w = weight.reshape(())
    return _where(self > 0, self, self * w)


prelu = _document(defop("prelu(Tensor self, Tensor weight) -> Tensor", check=_check_prelu, composite=_prelu),
                  "x where x > 0, else weight * x, with one weight per channel (dim 1) or one for all.")


def _check_rrelu(self, lower=0.125, upper=1.0 / 3.0, training=False, generator=None):
    if upper < lower:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    _floating("leaky_relu_cpu" if not training else "rrelu_with_noise_cpu")(self)


def _rrelu(self, lower=0.125, upper=1.0 / 3.0, training=False, generator=None):
    if not training:
        return leaky_relu(self, (lower + upper) / 2)
    slope = empty_like(self).uniform_(lower, upper, generator=generator)
    return _where(self >= 0, self, self * slope)


rrelu = _document(defop("rrelu(Tensor self, Scalar lower=0.125, Scalar upper=0.3333333333333333, bool training=False, "
                        "Generator? generator=None) -> Tensor", check=_check_rrelu, composite=_rrelu, tags=POINTWISE + SEEDED),
                  "leaky relu with slope (lower + upper) / 2; in training a slope drawn from U(lower, upper) per "
                  "negative element.")


# -- the LSTM recurrence --------------------------------------------------------------------------------
# One op runs an LSTM layer's whole time loop once the input projection (one GEMM over every step) is
# done: per step one GEMM with the recurrent weight and the gates. Its decomposition serves every
# backend; the CPU runs it (and its backward, the BPTT recurrence plus one GEMM for the weight) as one
# numpy kernel each, so autograd records one node per layer and direction instead of a dozen per step.
def _check_lstm_scan(xw, h0, c0, w_hh):
    if xw.dim() != 3 or h0.dim() != 2 or c0.dim() != 2 or w_hh.dim() != 2:
        raise RuntimeError("_lstm_scan: expected xw (T, B, 4H), h0 and c0 (B, H), w_hh (4H, H)")
    t, b, g = xw._shape
    hsz = h0._shape[1]
    if g != 4 * hsz or h0._shape != (b, hsz) or c0._shape != (b, hsz) or w_hh._shape != (g, hsz):
        raise RuntimeError(f"_lstm_scan: inconsistent sizes: xw {list(xw._shape)}, h0 {list(h0._shape)}, c0 "
                           f"{list(c0._shape)}, w_hh {list(w_hh._shape)}")
    _floating("_lstm_scan")(xw)


def _lstm_scan(xw, h0, c0, w_hh):
    hsz = h0._shape[1]
    wt = w_hh.t()
    h, c = h0, c0
    outs, cells, gates = [], [], []
    for t in range(xw._shape[0]):
        a = xw[t] + h.matmul(wt)
        i, f, g, o = a.narrow(1, 0, hsz).sigmoid(), a.narrow(1, hsz, hsz).sigmoid(), \
            a.narrow(1, 2 * hsz, hsz).tanh(), a.narrow(1, 3 * hsz, hsz).sigmoid()
        c = f * c + i * g
        h = o * c.tanh()
        outs.append(h)
        cells.append(c)
        gates.append(stack([i, f, g, o], 1).reshape(h._shape[0], 4 * hsz))
    return stack(outs), stack(cells), stack(gates)


lstm_scan = _document(defop("_lstm_scan(Tensor xw, Tensor h0, Tensor c0, Tensor w_hh) -> (Tensor, Tensor, Tensor)",
                            check=_check_lstm_scan, composite=_lstm_scan),
                      "An LSTM layer's recurrence over the projected inputs ``xw`` (T, B, 4H; gates i, f, g, o): "
                      "the hidden states (T, B, H), the cell states (T, B, H) and the activated gates (T, B, 4H).")


def _lstm_scan_backward(grad_output, grad_cells, grad_gates, h0, c0, w_hh, output, cells, gates):
    steps, b, hsz = output._shape
    dh = dc = None
    dgates = [None] * steps
    for t in range(steps - 1, -1, -1):
        c_prev = cells[t - 1] if t else c0
        gt = gates[t]
        i, f, g, o = (gt.narrow(1, k * hsz, hsz) for k in range(4))
        tc = cells[t].tanh()
        gh = grad_output[t] if grad_output is not None else None
        dh = gh if dh is None else (dh if gh is None else dh + gh)
        gc = grad_cells[t] if grad_cells is not None else None
        dcs = [v for v in (gc, dc, None if dh is None else dh * o * (1 - tc * tc)) if v is not None]
        dct = sum(dcs[1:], dcs[0]) if dcs else zeros((b, hsz), dtype=h0._dtype, device=h0._device)
        do = dh * tc if dh is not None else zeros((b, hsz), dtype=h0._dtype, device=h0._device)
        di, dg, df = dct * g, dct * i, dct * c_prev
        if grad_gates is not None:
            gg = grad_gates[t]
            di, df, dg, do = (di + gg.narrow(1, 0, hsz), df + gg.narrow(1, hsz, hsz),
                              dg + gg.narrow(1, 2 * hsz, hsz), do + gg.narrow(1, 3 * hsz, hsz))
        da = cat([di * i * (1 - i), df * f * (1 - f), dg * (1 - g * g), do * o * (1 - o)], 1)
        dgates[t] = da
        dh = da.matmul(w_hh)
        dc = dct * f
    dxw = stack(dgates)
    prev = cat([h0.unsqueeze(0), output.narrow(0, 0, steps - 1)], 0)
    dw = dxw.reshape(steps * b, 4 * hsz).t().matmul(prev.reshape(steps * b, hsz))
    return dxw, dh, dc, dw


lstm_scan_backward = _document(
    defop("_lstm_scan_backward(Tensor? grad_output, Tensor? grad_cells, Tensor? grad_gates, Tensor h0, Tensor c0, "
          "Tensor w_hh, Tensor output, Tensor cells, Tensor gates) -> (Tensor, Tensor, Tensor, Tensor)",
          composite=_lstm_scan_backward),
    "The gradients of ``_lstm_scan`` for xw, h0, c0 and w_hh (backpropagation through time).")


@derivative("_lstm_scan")
def _(grads, h0, c0, w_hh, result, result1, result2):
    go, gc, gg = grads
    return lstm_scan_backward(go, gc, gg, h0, c0, w_hh, result, result1, result2)


# -- the GRU recurrence ---------------------------------------------------------------------------------
# As the LSTM's: once the input projection is done, one op runs a GRU layer's time loop (per step one GEMM
# with the recurrent weight, plus its bias, and the gates), so autograd records one node per layer and
# direction, and a backend may run the loop, and its backward, as one kernel each.
def _check_gru_scan(xw, h0, w_hh, b_hh):
    if xw.dim() != 3 or h0.dim() != 2 or w_hh.dim() != 2 or b_hh.dim() != 1:
        raise RuntimeError("_gru_scan: expected xw (T, B, 3H), h0 (B, H), w_hh (3H, H) and b_hh (3H)")
    t, b, g = xw._shape
    hsz = h0._shape[1]
    if g != 3 * hsz or h0._shape != (b, hsz) or w_hh._shape != (g, hsz) or b_hh._shape != (g,):
        raise RuntimeError(f"_gru_scan: inconsistent sizes: xw {list(xw._shape)}, h0 {list(h0._shape)}, w_hh "
                           f"{list(w_hh._shape)}, b_hh {list(b_hh._shape)}")
    _floating("_gru_scan")(xw)


def _gru_scan(xw, h0, w_hh, b_hh):
    hsz = h0._shape[1]
    wt = w_hh.t()
    h = h0
    outs, gates = [], []
    for t in range(xw._shape[0]):
        gx, gh = xw[t], h.matmul(wt) + b_hh
        r = (gx.narrow(1, 0, hsz) + gh.narrow(1, 0, hsz)).sigmoid()
        z = (gx.narrow(1, hsz, hsz) + gh.narrow(1, hsz, hsz)).sigmoid()
        ghn = gh.narrow(1, 2 * hsz, hsz)
        n = (gx.narrow(1, 2 * hsz, hsz) + r * ghn).tanh()
        h = n + z * (h - n)
        outs.append(h)
        gates.append(cat([r, z, n, ghn], 1))
    return stack(outs), stack(gates)


gru_scan = _document(defop("_gru_scan(Tensor xw, Tensor h0, Tensor w_hh, Tensor b_hh) -> (Tensor, Tensor)",
                           check=_check_gru_scan, composite=_gru_scan),
                     "A GRU layer's recurrence over the projected inputs ``xw`` (T, B, 3H; gates r, z, n): the "
                     "hidden states (T, B, H) and, kept for backward, (T, B, 4H): r, z, n and h W_hn^T + b_hn.")


def _gru_scan_backward(grad_output, grad_gates, h0, w_hh, output, gates):
    steps, b, hsz = output._shape
    dh = None
    dxs, dghs = [None] * steps, [None] * steps
    for t in range(steps - 1, -1, -1):
        h_prev = output[t - 1] if t else h0
        r, z, n, ghn = (gates[t].narrow(1, k * hsz, hsz) for k in range(4))
        gh = grad_output[t] if grad_output is not None else None
        dh = gh if dh is None else (dh if gh is None else dh + gh)
        if dh is None:
            dh = zeros((b, hsz), dtype=h0._dtype, device=h0._device)
        dn, dz = dh * (1 - z), dh * (h_prev - n)
        if grad_gates is not None:
            gg = grad_gates[t]
            dn, dz = dn + gg.narrow(1, 2 * hsz, hsz), dz + gg.narrow(1, hsz, hsz)
        dnp = dn * (1 - n * n)
        dr, dghn = dnp * ghn, dnp * r
        if grad_gates is not None:
            dr, dghn = dr + gg.narrow(1, 0, hsz), dghn + gg.narrow(1, 3 * hsz, hsz)
        drp, dzp = dr * r * (1 - r), dz * z * (1 - z)
        dxs[t] = cat([drp, dzp, dnp], 1)
        dghs[t] = cat([drp, dzp, dghn], 1)
        dh = dh * z + dghs[t].matmul(w_hh)
    dgh = stack(dghs)
    prev = cat([h0.unsqueeze(0), output.narrow(0, 0, steps - 1)], 0)
    dw = dgh.reshape(steps * b, 3 * hsz).t().matmul(prev.reshape(steps * b, hsz))
    return stack(dxs), dh, dw, dgh.reshape(steps * b, 3 * hsz).sum(0)


gru_scan_backward = _document(
    defop("_gru_scan_backward(Tensor? grad_output, Tensor? grad_gates, Tensor h0, Tensor w_hh, Tensor output, "
          "Tensor gates) -> (Tensor, Tensor, Tensor, Tensor)", composite=_gru_scan_backward),
    "The gradients of ``_gru_scan`` for xw, h0, w_hh and b_hh (backpropagation through time).")


@derivative("_gru_scan")
def _(grads, h0, w_hh, result, result1):
    go, gg = grads
    return gru_scan_backward(go, gg, h0, w_hh, result, result1)


# -- cdist --------------------------------------------------------------------------------------------------
def _check_cdist(x1, x2, p=2.0, compute_mode=None):
    if x1.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    if x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {x2.dim()}D")
    if x1._shape[-1] != x2._shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1._shape[-1]} X2: "
                           f"{x2._shape[-1]}")
    if not (x1._dtype.is_floating_point and x2._dtype.is_floating_point):
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: {_pt_name(x1._dtype)}")
    if x1._dtype is not x2._dtype:
        raise RuntimeError(f"cdist only supports floating-point dtypes, X2 got: {_pt_name(x2._dtype)}")
    if x1._dtype in (_dt.float16, _dt.bfloat16):
        raise not_implemented("cdist", x1._dtype)
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")


def _cdist(x1, x2, p=2.0, compute_mode=None):
    d = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    if p == 0:  # a count of the differing columns, with a zero gradient as in PyTorch
        return _as((d != 0).sum(-1), d._dtype) + d.sum(-1) * 0.0
    return norm(d, p, -1)


cdist_op = defop("cdist(Tensor x1, Tensor x2, float p=2, int? compute_mode=None) -> Tensor", check=_check_cdist,
                 composite=_cdist)

_COMPUTE_MODES = {"use_mm_for_euclid_dist_if_necessary": None, "use_mm_for_euclid_dist": 1,
                  "donot_use_mm_for_euclid_dist": 2}


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The ``p``-norm distance between each row of ``x1`` (*, P, M) and each row of ``x2`` (*, R, M): (*, P, R).
    ``compute_mode`` is accepted and ignored (the distances are computed directly, never through a matmul)."""
    if compute_mode not in _COMPUTE_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    return cdist_op(x1, x2, float(p), _COMPUTE_MODES[compute_mode])


public("cdist", cdist)
