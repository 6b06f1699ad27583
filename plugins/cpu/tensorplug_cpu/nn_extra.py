"""CPU kernels of the recurrent layers (an LSTM layer's whole time loop, and its backward) and of the CTC
loss (the log-space forward-backward recursions), in numpy.

Per step the forward does one GEMM with the recurrent weight and the gate arithmetic (one tanh over
all four gates) in place on preallocated buffers; the backward runs the recurrence (one GEMM per step) and computes the recurrent
weight's gradient as one GEMM over every step at the end. float16 and bfloat16 compute in float32.
"""

from __future__ import annotations


from .elementwise import quiet
from .kernels import wrap
from .xp import xp


def _f(t):
    a = t._data
    return a if a.dtype in (xp.float32, xp.float64) else a.astype(xp.float32)


def _out(a, like):
    return wrap(a if a.dtype == like._dtype.np else a.astype(like._dtype.np), like._dtype)


def _sigmoids_as_tanh(xw, w_hh, plain):
    """sigmoid(v) = 0.5 * tanh(v / 2) + 0.5 (no overflow): the inputs ``xw`` and the recurrent weight, transposed,
    with the columns of the sigmoid gates halved once (exact), so that one tanh per step activates every gate;
    the columns ``plain`` (a slice: a tanh gate) are kept. Returns (inputs, weight, column scales). The weight
    is row-major (``h @ w.T`` through a transposed view is slower) and never ``w_hh``'s memory."""
    x, wa = _f(xw), _f(w_hh)
    scale = xp.full(x.shape[2], 0.5, x.dtype)
    scale[plain] = 1
    w = xp.empty((wa.shape[1], x.shape[2]), x.dtype)
    xp.multiply(wa.T, scale, out=w)
    return x * scale, w, scale


def lstm_scan(xw, h0, c0, w_hh):
    steps, b, g = xw._shape
    hsz = g // 4
    # i, f and o are sigmoids, g a tanh: after one tanh, one contiguous scale-and-shift activates all four
    xs, w, scale = _sigmoids_as_tanh(xw, w_hh, slice(2 * hsz, 3 * hsz))
    shift = 1 - scale
    ct = xs.dtype
    out = xp.empty((steps, b, hsz), ct)
    cells = xp.empty((steps, b, hsz), ct)
    gates = xp.empty((steps, b, g), ct)
    h = _f(h0).astype(ct, copy=False)
    c = _f(c0).astype(ct, copy=False)
    tmp = xp.empty((b, hsz), ct)
    for t in range(steps):
        a = gates[t]
        xp.matmul(h, w, out=a)
        a += xs[t]
        xp.tanh(a, out=a)
        a *= scale
        a += shift
        cn = cells[t]
        xp.multiply(a[:, hsz:2 * hsz], c, out=cn)  # f * c
        xp.multiply(a[:, :hsz], a[:, 2 * hsz:3 * hsz], out=tmp)  # i * g
        cn += tmp
        hn = out[t]
        xp.tanh(cn, out=hn)
        hn *= a[:, 3 * hsz:]  # o * tanh(c)
        h, c = hn, cn
    return _out(out, xw), _out(cells, xw), _out(gates, xw)


def lstm_scan_backward(grad_output, grad_cells, grad_gates, h0, c0, w_hh, output, cells, gates):
    out, cs, gs = _f(output), _f(cells), _f(gates)
    ct = out.dtype
    steps, b, hsz = out.shape
    w = _f(w_hh).astype(ct, copy=False)
    go = None if grad_output is None else _f(grad_output).astype(ct, copy=False)
    gc = None if grad_cells is None else _f(grad_cells).astype(ct, copy=False)
    c0a = _f(c0).astype(ct, copy=False)
    # everything that does not depend on the recurrence, for all steps at once
    g4 = gs.reshape(steps, b, 4, hsz)
    i, f, g, o = g4[:, :, 0], g4[:, :, 1], g4[:, :, 2], g4[:, :, 3]
    deriv = g4 * (1 - g4)  # sigmoid' for i, f, o
    deriv[:, :, 2] = 1 - g * g  # tanh' for g
    tc = xp.tanh(cs)
    c_prev = xp.concatenate([c0a[None], cs[:-1]], 0)
    # d(pre-activation) of i, f, g per unit of dc, and of o per unit of dh
    q = xp.stack([g, c_prev, i], 2) * deriv[:, :, :3]
    r = tc * deriv[:, :, 3]
    ao = o * (1 - tc * tc)  # dc per unit of dh
    # a gradient on the activated gates adds to the pre-activations through each gate's derivative
    extra = None if grad_gates is None else \
        (_f(grad_gates).astype(ct, copy=False).reshape(steps, b, 4, hsz) * deriv).reshape(steps, b, 4 * hsz)
    dxw = xp.empty((steps, b, 4 * hsz), ct)
    d4 = dxw.reshape(steps, b, 4, hsz)
    dh = xp.zeros((b, hsz), ct)
    dc = xp.zeros((b, hsz), ct)
    for t in range(steps - 1, -1, -1):
        if go is not None:
            dh += go[t]
        if gc is not None:
            dc += gc[t]
        dc += dh * ao[t]
        xp.multiply(dc[:, None, :], q[t], out=d4[t, :, :3])
        xp.multiply(dh, r[t], out=d4[t, :, 3])
        if extra is not None:
            dxw[t] += extra[t]
        dh = dxw[t] @ w
        dc = dc * f[t]
    prev = xp.concatenate([_f(h0).astype(ct, copy=False)[None], out[:-1]], 0)
    dw = dxw.reshape(steps * b, 4 * hsz).T @ prev.reshape(steps * b, hsz)
    return _out(dxw, output), _out(dh, h0), _out(dc, c0), _out(dw, w_hh)




def gru_scan(xw, h0, w_hh, b_hh):
    steps, b, g = xw._shape
    hsz = g // 3
    # r and z are sigmoids (their bias columns halved too); n's columns are kept, so h W_hn^T + b_hn comes
    # out of the GEMM as it is
    xs, w, scale = _sigmoids_as_tanh(xw, w_hh, slice(2 * hsz, None))
    ct = xs.dtype
    bias = _f(b_hh).astype(ct) * scale
    out = xp.empty((steps, b, hsz), ct)
    gates = xp.empty((steps, b, 4 * hsz), ct)  # r, z, n, h W_hn^T + b_hn
    gh = xp.empty((b, g), ct)
    h = _f(h0).astype(ct, copy=False)
    for t in range(steps):
        gt = gates[t]
        xp.matmul(h, w, out=gh)
        gh += bias
        rz = gt[:, :2 * hsz]
        xp.add(xs[t, :, :2 * hsz], gh[:, :2 * hsz], out=rz)
        xp.tanh(rz, out=rz)
        rz *= 0.5
        rz += 0.5
        ghn = gt[:, 3 * hsz:]
        ghn[...] = gh[:, 2 * hsz:]
        n = gt[:, 2 * hsz:3 * hsz]
        xp.multiply(rz[:, :hsz], ghn, out=n)
        n += xs[t, :, 2 * hsz:]
        xp.tanh(n, out=n)
        hn = out[t]
        xp.subtract(h, n, out=hn)  # h' = n + z (h - n)
        hn *= rz[:, hsz:]
        hn += n
        h = hn
    return _out(out, xw), _out(gates, xw)


def gru_scan_backward(grad_output, grad_gates, h0, w_hh, output, gates):
    out, gs = _f(output), _f(gates)
    ct = out.dtype
    steps, b, hsz = out.shape
    w = _f(w_hh).astype(ct, copy=False)
    h_prev = xp.concatenate([_f(h0).astype(ct, copy=False)[None], out[:-1]], 0)
    g4 = gs.reshape(steps, b, 4, hsz)
    r, z, n, ghn = g4[:, :, 0], g4[:, :, 1], g4[:, :, 2], g4[:, :, 3]
    # per unit of dh at each step, for all steps at once: d(pre-activation) of n, then of r and z, and
    # d(h W_hn^T + b_hn); a gradient on the kept gates adds terms of its own (extra)
    dn_dh = (1 - z) * (1 - n * n)
    q = xp.empty((steps, b, 3, hsz), ct)  # r, z, W_hn part: the recurrent GEMM's output gradient per unit dh
    xp.multiply(dn_dh * ghn, r * (1 - r), out=q[:, :, 0])
    xp.multiply(h_prev - n, z * (1 - z), out=q[:, :, 1])
    xp.multiply(dn_dh, r, out=q[:, :, 2])
    extra, extra_n = None, None
    if grad_gates is not None:
        gg = _f(grad_gates).astype(ct, copy=False).reshape(steps, b, 4, hsz)
        extra_n = gg[:, :, 2] * (1 - n * n)
        extra = xp.stack([(extra_n * ghn + gg[:, :, 0]) * r * (1 - r), gg[:, :, 1] * z * (1 - z),
                          extra_n * r + gg[:, :, 3]], 2).reshape(steps, b, 3 * hsz)
    go = None if grad_output is None else _f(grad_output).astype(ct, copy=False)
    dgh = xp.empty((steps, b, 3 * hsz), ct)
    d3 = dgh.reshape(steps, b, 3, hsz)
    dhs = xp.empty((steps, b, hsz), ct)  # the whole dh at each step
    dh = xp.zeros((b, hsz), ct)
    for t in range(steps - 1, -1, -1):
        if go is not None:
            dh += go[t]
        dhs[t] = dh
        xp.multiply(dh[:, None, :], q[t], out=d3[t])
        if extra is not None:
            dgh[t] += extra[t]
        nxt = dgh[t] @ w
        dh *= z[t]
        dh += nxt
    dxw = xp.empty((steps, b, 3 * hsz), ct)
    dxw[:, :, :2 * hsz] = dgh[:, :, :2 * hsz]
    xp.multiply(dhs, dn_dh, out=dxw[:, :, 2 * hsz:])
    if extra_n is not None:
        dxw[:, :, 2 * hsz:] += extra_n
    flat = dgh.reshape(steps * b, 3 * hsz)
    dw = flat.T @ h_prev.reshape(steps * b, hsz)
    db = xp.ones(steps * b, ct) @ flat
    return _out(dxw, output), _out(dh, h0), _out(dw, w_hh), _out(db, w_hh)


# -- CTC loss --------------------------------------------------------------------------------------------
def _ctc_targets(targets, target_lengths):
    """Each sample's target labels (numpy int arrays), from (N, S) padded or 1-D concatenated targets."""
    t = xp.asarray(targets._data).astype(xp.int64)
    if t.ndim == 1:
        starts = xp.concatenate([[0], xp.cumsum(target_lengths)[:-1]]).astype(xp.int64)
        return [t[s:s + n] for s, n in zip(starts, target_lengths)]
    return [t[b, :n] for b, n in enumerate(target_lengths)]


def _ctc_extended(labels, blank):
    n = 2 * len(labels) + 1
    ext = xp.full(n, blank, xp.int64)
    ext[1::2] = labels
    skip = xp.zeros(n, bool)  # s may be reached from s - 2: a label that differs from the one before it
    if len(labels) > 1:
        skip[3::2] = labels[1:] != labels[:-1]
    return ext, skip


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, zero_infinity=False):
    lp = log_probs._data.astype(xp.float64)
    t_max, batch, _ = lp.shape
    width = 2 * max(target_lengths, default=0) + 1
    log_alpha = xp.full((batch, t_max, width), -xp.inf)
    nll = xp.empty(batch)
    for b, labels in enumerate(_ctc_targets(targets, target_lengths)):
        ext, skip = _ctc_extended(labels, blank)
        n, steps = len(ext), input_lengths[b]
        if steps == 0:
            nll[b] = 0.0 if n == 1 else xp.inf
            continue
        la = log_alpha[b]
        emit = lp[:steps, b, :][:, ext]  # (T_b, n)
        la[0, 0] = emit[0, 0]
        if n > 1:
            la[0, 1] = emit[0, 1]
        for t in range(1, steps):
            prev = la[t - 1, :n]
            x = prev.copy()
            x[1:] = xp.logaddexp(x[1:], prev[:-1])
            x[2:] = xp.where(skip[2:], xp.logaddexp(x[2:], prev[:-2]), x[2:])
            la[t, :n] = x + emit[t]
        end = la[steps - 1, n - 1] if n == 1 else xp.logaddexp(la[steps - 1, n - 1], la[steps - 1, n - 2])
        nll[b] = -end
    if zero_infinity:
        nll = xp.where(xp.isinf(nll), 0.0, nll)
    dt = log_probs._dtype
    return wrap(nll.astype(dt.np), dt), wrap(log_alpha.astype(dt.np), dt)


def ctc_loss_backward(grad, log_probs, targets, input_lengths, target_lengths, neg_log_likelihood, log_alpha,
                      blank, zero_infinity=False):
    lp = log_probs._data.astype(xp.float64)
    la_all = log_alpha._data.astype(xp.float64)
    g_out = xp.broadcast_to(grad._data.astype(xp.float64), (lp.shape[1],))
    t_max, batch, classes = lp.shape
    out = xp.zeros_like(lp)
    for b, labels in enumerate(_ctc_targets(targets, target_lengths)):
        ext, skip = _ctc_extended(labels, blank)
        n, steps = len(ext), input_lengths[b]
        if steps == 0:
            continue
        emit = lp[:steps, b, :][:, ext]
        la = la_all[b, :steps, :n]
        nll = -(la[steps - 1, n - 1] if n == 1 else xp.logaddexp(la[steps - 1, n - 1], la[steps - 1, n - 2]))
        if zero_infinity and xp.isinf(nll):
            continue
        lb = xp.full((steps, n), -xp.inf)
        lb[steps - 1, n - 1] = emit[steps - 1, n - 1]
        if n > 1:
            lb[steps - 1, n - 2] = emit[steps - 1, n - 2]
        for t in range(steps - 2, -1, -1):
            nxt = lb[t + 1]
            x = nxt.copy()
            x[:-1] = xp.logaddexp(x[:-1], nxt[1:])
            x[:-2] = xp.where(skip[2:], xp.logaddexp(x[:-2], nxt[2:]), x[:-2])
            lb[t] = x + emit[t]
        ab = la + lb  # log(alpha * beta) per extended position
        lcab = xp.full((steps, classes), -xp.inf)
        for s in range(n):
            c = ext[s]
            lcab[:, c] = xp.logaddexp(lcab[:, c], ab[:, s])
        lpb = lp[:steps, b, :]
        out[:steps, b, :] = (xp.exp(lpb) - xp.exp(lcab + nll - lpb)) * g_out[b]
    dt = log_probs._dtype
    return wrap(out.astype(dt.np), dt)


KERNELS = {"_lstm_scan": quiet(lstm_scan), "_lstm_scan_backward": quiet(lstm_scan_backward),
           "_gru_scan": quiet(gru_scan), "_gru_scan_backward": quiet(gru_scan_backward),
           "_ctc_loss": quiet(ctc_loss), "_ctc_loss_backward": quiet(ctc_loss_backward)}
