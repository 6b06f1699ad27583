"""Multi-tensor optimizer updates: ``_fused_adam_``, ``_fused_adamw_`` and ``_fused_sgd_`` over numpy arrays.

One dispatcher call updates every parameter of a group in place. float32 and
float64 parameters take the same float operations, in the same order and
dtype, as the core's one-op-at-a-time composite (so ``Adam(fused=True)`` and
``Adam(fused=False)``, and SGD's, agree bit for bit); float16 and bfloat16 parameters are
updated in float32 and rounded once, as PyTorch's fused kernels do.
"""

from __future__ import annotations

import numpy as np
from .xp import xp

_F32 = np.dtype(xp.float32)
_F64 = np.dtype(xp.float64)


def _adam_one(p, g, m, v, vmax, step, lr, beta1, beta2, weight_decay, eps, amsgrad, maximize, decoupled):
    """Update the arrays ``p``, ``m``, ``v`` (and ``vmax``) in place; all have one float dtype."""
    c = p.dtype.type
    if p.ndim == 0:  # numpy answers a 0-dim array's arithmetic with scalars: work on 1-element views
        p, g, m, v = p.reshape(1), g.reshape(1), m.reshape(1), v.reshape(1)
        vmax = vmax.reshape(1) if vmax is not None else None
    if maximize:
        g = xp.negative(g)
    if weight_decay != 0:
        if decoupled:
            xp.multiply(p, c(1 - lr * weight_decay), out=p)
        else:
            g = g + p * c(weight_decay)
    w = 1 - beta1
    diff = g - m  # lerp(m, g, w), PyTorch's two-sided formula
    if w < 0.5:
        diff *= c(w)
        m += diff
    else:
        diff *= c(1 - w)
        xp.subtract(g, diff, out=m)
    xp.multiply(v, c(beta2), out=v)
    sq = g * g
    sq *= c(1 - beta2)
    v += sq
    step_size = lr / (1 - beta1 ** step)
    bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
    if amsgrad:
        xp.maximum(vmax, v, out=vmax)
        v = vmax
    denom = xp.sqrt(v)
    denom /= c(bias_correction2_sqrt)
    denom += c(eps)
    xp.divide(m, denom, out=denom)
    denom *= c(-step_size)
    p += denom


def _fused(decoupled):
    def kernel(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, lr, beta1, beta2, weight_decay, eps,
               amsgrad, maximize):
        with np.errstate(all="ignore"):
            for i, (pt, gt, mt, vt) in enumerate(zip(self, grads, exp_avgs, exp_avg_sqs)):
                p, g, m, v = pt._data, gt._data, mt._data, vt._data
                vmax = max_exp_avg_sqs[i]._data if amsgrad else None
                if p.dtype == _F32 or p.dtype == _F64:
                    _adam_one(p, g, m, v, vmax, float(steps[i]._data), lr, beta1, beta2, weight_decay, eps, amsgrad, maximize,
                              decoupled)
                    continue
                # half precision: the update in float32, each state rounded back once
                up = [a.astype(_F32) for a in (p, g, m, v)] + [vmax.astype(_F32) if amsgrad else None]
                _adam_one(*up, float(steps[i]._data), lr, beta1, beta2, weight_decay, eps, amsgrad, maximize, decoupled)
                for dst, src in zip((p, m, v, vmax), (up[0], up[2], up[3], up[4])):
                    if dst is not None:
                        dst[...] = src.astype(dst.dtype)
    kernel.__name__ = "_fused_adamw_" if decoupled else "_fused_adam_"
    return kernel


def _sgd_one(p, g, buf, weight_decay, momentum, lr, dampening, nesterov, maximize, first):
    """Update ``p`` (and the momentum buffer ``buf``) in place; all arrays have one float dtype. The
    steps and roundings of the core's composite loop, without its dispatches."""
    c = p.dtype.type
    if p.ndim == 0:  # numpy answers a 0-dim array's arithmetic with scalars: work on 1-element views
        p, g = p.reshape(1), g.reshape(1)
        buf = buf.reshape(1) if buf is not None else None
    if maximize:
        g = xp.negative(g)
    if weight_decay != 0:
        g = g + p * c(weight_decay)
    if momentum != 0:
        if first:
            xp.copyto(buf, g)
        else:
            buf *= c(momentum)
            if dampening == 0:
                buf += g
            else:
                buf += g * c(1 - dampening)
        g = g + buf * c(momentum) if nesterov else buf
    p += g * c(-lr)


def fused_sgd(self, grads, momentum_buffer_list, weight_decay, momentum, lr, dampening, nesterov, maximize,
              is_first_step):
    with np.errstate(all="ignore"):
        for i, (pt, gt) in enumerate(zip(self, grads)):
            p, g = pt._data, gt._data
            buf = momentum_buffer_list[i]._data if momentum != 0 else None
            if p.dtype == _F32 or p.dtype == _F64:
                _sgd_one(p, g, buf, weight_decay, momentum, lr, dampening, nesterov, maximize, is_first_step)
                continue
            # half precision: the update in float32, the parameter and buffer rounded back once
            p32, b32 = p.astype(_F32), (buf.astype(_F32) if buf is not None else None)
            _sgd_one(p32, g.astype(_F32), b32, weight_decay, momentum, lr, dampening, nesterov, maximize,
                     is_first_step)
            p[...] = p32.astype(p.dtype)
            if buf is not None:
                buf[...] = b32.astype(buf.dtype)


KERNELS = {"_fused_adam_": _fused(False), "_fused_adamw_": _fused(True), "_fused_sgd_": fused_sgd}
